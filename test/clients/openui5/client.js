// What an OpenUI5 app does with entityctl, through a V4 ODataModel and no control: the test
// (test/clients/openui5.test.ts) calls each function of window.ui5Client with page.evaluate
// and reads what the model answers, as plain data. The model runs as an app would run it:
// group $auto (every data request in a $batch), its own CSRF handshake, a bearer token.

window.ui5Client = (() => {
  /** sap.ui.require as a promise, once the core has booted. */
  const ready = new Promise((resolve, reject) => {
    sap.ui.require(['sap/ui/core/Core'], (Core) => Core.ready().then(resolve, reject), reject)
  })
  const load = (...names) => ready.then(() => new Promise((resolve, reject) => sap.ui.require(names, (...modules) => resolve(modules), reject)))

  let model
  /** Contexts of entities the page holds on to between calls, by Guid (as an app keeps its rows). */
  const held = new Map()

  /** The model's messages (what UI5 shows a user when a request fails), for the test's diagnosis. */
  async function messages() {
    const [Messaging] = await load('sap/ui/core/Messaging')
    return Messaging.getMessageModel()
      .getData()
      .map((message) => `${message.getType()}: ${message.getMessage()}`)
  }

  /** The error a model promise rejected with, with the model's messages: page.evaluate then rejects with all of it. */
  async function explain(error) {
    const status = error?.status ? ` (HTTP ${error.status})` : ''
    throw new Error(`${error?.message ?? error}${status}; messages: ${JSON.stringify(await messages())}`)
  }

  /** Guid of an entity the model holds, from its canonical path `/Customers(…)`. */
  function guidOf(context) {
    return /\(([^)]+)\)$/.exec(context.getPath())[1]
  }

  return {
    /** Creates the model on the service (OData 4.0 unless told) and loads $metadata: the entity sets it names. */
    async connect(serviceUrl, token, odataVersion = '4.0') {
      const [ODataModel] = await load('sap/ui/model/odata/v4/ODataModel')
      model = new ODataModel({ serviceUrl, httpHeaders: { Authorization: `Bearer ${token}` }, operationMode: 'Server', odataVersion })
      try {
        const container = await model.getMetaModel().requestObject('/$EntityContainer/')
        return Object.keys(container).filter((name) => !name.startsWith('$'))
      } catch (error) {
        return explain(error)
      }
    },

    /** A list with a filter, a search and the count, as a table with a search field shows it. */
    async listCustomers(filter, search) {
      const binding = model.bindList('/Customers', undefined, undefined, undefined, {
        $filter: filter,
        $search: search,
        $count: true,
        $orderby: 'Name',
        $select: 'Name,City,Country',
      })
      try {
        const contexts = await binding.requestContexts(0, 50)
        const count = await binding.getHeaderContext().requestProperty('$count')
        for (const context of contexts) held.set(guidOf(context), context)
        return { count, customers: contexts.map((context) => context.getObject()) }
      } catch (error) {
        return explain(error)
      }
    },

    /** One customer with its orders expanded, as an object page opens it. */
    async openCustomer(guid) {
      const binding = model.bindContext(`/Customers(${guid})`, undefined, {
        $select: 'Name,City',
        $expand: 'Orders($select=Number,Status;$orderby=Number)',
      })
      try {
        return await binding.getBoundContext().requestObject()
      } catch (error) {
        return explain(error)
      }
    },

    /**
     * New customers, created through a list binding in one go (one change set of the $batch):
     * what the model holds for each once created, the rules' corrections included.
     */
    async createCustomers(customers) {
      const binding = model.bindList('/Customers', undefined, undefined, undefined, { $select: 'Name,City,Country,CreditLimit,Title' })
      const contexts = customers.map((data) => binding.create(data))
      try {
        await Promise.all(contexts.map((context) => context.created()))
        for (const context of contexts) held.set(guidOf(context), context)
        return await Promise.all(contexts.map((context) => context.requestObject()))
      } catch (error) {
        return explain(error)
      }
    },

    /**
     * A create the service refuses: the messages the model made of its error part, each with
     * the fields it targets (what a form highlights). The refused row is then discarded.
     */
    async createRefused(data) {
      const [Messaging] = await load('sap/ui/core/Messaging')
      Messaging.removeAllMessages()
      const binding = model.bindList('/Customers', undefined, undefined, undefined, { $select: 'Name' })
      const completed = new Promise((resolve) => binding.attachEventOnce('createCompleted', (event) => resolve(event.getParameter('success'))))
      const context = binding.create(data)
      // The row stays, to be sent again once fixed; the event says its POST was answered.
      if (await completed) throw new Error('the create succeeded')
      const refused = Messaging.getMessageModel()
        .getData()
        .map((message) => ({ message: message.getMessage(), targets: message.getTargets() }))
      await context.delete()
      return refused
    },

    /**
     * Two creates in one change set, the second refused: the messages the model made of the
     * change set's error, each with its targets; both rows are then discarded.
     */
    async createOneRefused(accepted, refused) {
      const [Messaging] = await load('sap/ui/core/Messaging')
      Messaging.removeAllMessages()
      const binding = model.bindList('/Customers', undefined, undefined, undefined, { $select: 'Name' })
      const outcomes = []
      binding.attachEvent('createCompleted', (event) => outcomes.push(event.getParameter('success')))
      const contexts = [binding.create(accepted), binding.create(refused)]
      while (outcomes.length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      const messages = Messaging.getMessageModel()
        .getData()
        .map((message) => ({ message: message.getMessage(), targets: message.getTargets() }))
      const paths = contexts.map((context) => context.getPath())
      await Promise.all(contexts.map((context) => context.delete()))
      return { outcomes, messages, paths }
    },

    /**
     * A new order in a customer's Orders, as an object page adds a row to its table: a list
     * relative to the customer (POST through the navigation), then the row read back through it.
     */
    async addOrder(customerGuid, data) {
      const customer = model.bindContext(`/Customers(${customerGuid})`, undefined, { $select: 'Name' })
      const orders = model.bindList('Orders', customer.getBoundContext(), undefined, undefined, { $$ownRequest: true, $select: 'Number,Status' })
      const context = orders.create(data)
      try {
        await context.created()
        return { path: context.getPath(), order: await context.requestObject() }
      } catch (error) {
        return explain(error)
      }
    },

    /** Sets properties of a held customer, which the model sends as one PATCH with the ETag it holds. */
    async editCustomer(guid, changes) {
      const context = held.get(guid)
      try {
        await Promise.all(Object.entries(changes).map(([property, value]) => context.setProperty(property, value)))
        return context.getObject()
      } catch (error) {
        return explain(error)
      }
    },

    /** Deletes held customers in one go (one change set). */
    async deleteCustomers(guids) {
      try {
        await Promise.all(guids.map((guid) => held.get(guid).delete()))
        for (const guid of guids) held.delete(guid)
      } catch (error) {
        return explain(error)
      }
    },

    /**
     * Calls an action or a function (`/Orders(…)/entityctl.Close`), with its parameters: what it
     * returned (`{ value }` for a primitive or a collection), or undefined when nothing.
     */
    async callOperation(path, parameters = {}) {
      const operation = model.bindContext(`${path}(...)`)
      for (const [name, value] of Object.entries(parameters)) operation.setParameter(name, value)
      try {
        await (operation.invoke ? operation.invoke() : operation.execute())
        return operation.getBoundContext().getObject()
      } catch (error) {
        return explain(error)
      }
    },

    /**
     * An action on a row of a customer's orders table (a list relative to the customer): the
     * model calls it through the row's path, Customers(…)/Orders(…)/<action>, with the row's ETag.
     */
    async callRowAction(customerGuid, orderGuid, action) {
      const customer = model.bindContext(`/Customers(${customerGuid})`, undefined, { $select: 'Name' })
      const orders = model.bindList('Orders', customer.getBoundContext(), undefined, undefined, { $select: 'Number,Status' })
      try {
        const row = (await orders.requestContexts(0, 50)).find((context) => context.getProperty('Guid') === orderGuid)
        await model.bindContext(`${action}(...)`, row).invoke()
      } catch (error) {
        return explain(error)
      }
    },

    /** One entity, read afresh. */
    async readEntity(path, select) {
      try {
        return await model.bindContext(path, undefined, { $select: select }).getBoundContext().requestObject()
      } catch (error) {
        return explain(error)
      }
    },

    /** A property's annotation, as a Fiori app reads its labels from $metadata. */
    async annotation(path) {
      return model.getMetaModel().requestObject(path)
    },
  }
})()
