// The explorer page's script (explorer-page.html): credentials first, then Swagger UI.
// Every request the page sends, the fetch of openapi.json included (it needs the same
// credentials as $metadata), carries the Authorization the user gave: a sign-in's access
// token as Bearer, a personal access token as Basic pat:<secret>. Kept in sessionStorage,
// so a reload keeps it and closing the tab forgets it.
;(function () {
  'use strict'
  var KEY = 'entityctl.explorer.authorization'
  var status = document.getElementById('status')
  var authorization = sessionStorage.getItem(KEY)

  function say(text, isError) {
    status.textContent = text
    status.className = isError ? 'error' : ''
  }

  /** A pasted token → the Authorization header that carries it. */
  function authorizationOf(token) {
    token = token.trim().replace(/^(Bearer|Basic)\s+/i, '')
    if (/^(pat:)?ectl_pat_/.test(token)) return 'Basic ' + btoa('pat:' + token.replace(/^pat:/, ''))
    return 'Bearer ' + token
  }

  function hasAuthorization(headers) {
    return Object.keys(headers).some(function (name) { return name.toLowerCase() === 'authorization' })
  }

  function load() {
    say('Loading the API…')
    window.ui = SwaggerUIBundle({
      url: 'openapi.json',
      dom_id: '#swagger-ui',
      deepLinking: false,
      tryItOutEnabled: true,
      displayRequestDuration: true,
      // Swagger UI would ask validator.swagger.io for a badge: nothing leaves this origin.
      validatorUrl: null,
      // Swagger UI's own Authorize dialog still works: what it sets is kept.
      requestInterceptor: function (request) {
        if (authorization && !hasAuthorization(request.headers)) request.headers.Authorization = authorization
        return request
      },
      responseInterceptor: function (response) {
        if (/openapi\.json$/.test(response.url)) {
          if (response.ok) say('Signed in. Open an entity set below, press "Execute", and see the answer.')
          else say('The API did not load (' + response.status + '): sign in again or give another token.', true)
        }
        return response
      },
    })
  }

  function use(value) {
    authorization = value
    sessionStorage.setItem(KEY, value)
    load()
  }

  document.getElementById('signin').addEventListener('submit', function (event) {
    event.preventDefault()
    say('Signing in…')
    fetch('auth/signin', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        TenantId: document.getElementById('tenant').value,
        Username: document.getElementById('username').value,
        Password: document.getElementById('password').value,
      }),
    })
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error((body.error && body.error.message) || 'Sign-in failed (' + response.status + ')')
          document.getElementById('password').value = ''
          use('Bearer ' + body.accessToken)
        })
      })
      .catch(function (error) { say(error.message, true) })
  })

  document.getElementById('paste').addEventListener('submit', function (event) {
    event.preventDefault()
    var token = document.getElementById('token').value
    if (!token.trim()) return say('Paste a token first.', true)
    use(authorizationOf(token))
  })

  if (authorization) load()
})()
