// What a workflow answers when it cannot go on (decisions.md "Workflows"). Wording lives here,
// so call sites read as the failure they report.

import { ServiceError, type ErrorDetail } from '../errors.ts'
import type { OpenWorkflow } from './workflow-store.ts'

/** A stored request, as an error names it. */
export interface RequestRef {
  readonly index: number
  readonly method: string
  readonly path: string
}

const describe = (request: RequestRef) => `request ${request.index} of the workflow (${request.method} ${request.path})`

export const WorkflowError = {
  /** `header`: the one at fault, as the error's target. */
  headers: (problem: string, header: 'Workflow-Id' | 'Workflow-Index' = 'Workflow-Id') => new ServiceError('InvalidRequest', problem, { target: header }),
  /** The same answer for an unknown id and for someone else's workflow: it does not exist for them. */
  notFound: (id: string, why = 'it was never created here, belongs to someone else, or was aborted or discarded') =>
    new ServiceError('WorkflowNotFound', `Workflow ${id} does not exist: ${why}.`, { target: 'Workflow-Id' }),
  indexConflict: (given: number, expected: number) =>
    new ServiceError('WorkflowIndexConflict', `Workflow-Index ${given} is out of order: the next index of this workflow is ${expected}.`, {
      target: 'Workflow-Index',
    }),
  limitExceeded: (max: number) =>
    new ServiceError('WorkflowLimitExceeded', `A workflow holds at most ${max} requests (Workflow:MaxRequests); commit or abort this one.`, {
      target: 'Workflow-Index',
    }),
  /** A start past Workflow:MaxOpenPerUser; the details name the open ones, since a client that lost their ids can end them only so. */
  tooManyOpen: (max: number, open: readonly OpenWorkflow[], idleMinutes: number) =>
    new ServiceError(
      'WorkflowLimitExceeded',
      `A user holds at most ${max} open workflows (Workflow:MaxOpenPerUser), and you hold ${open.length}: ` +
        'commit or abort one of them (POST /api/workflow/commit or /api/workflow/abort with its Workflow-Id; the details name them), ' +
        `or wait until one expires after ${idleMinutes} minutes without a request.`,
      {
        target: 'Workflow:MaxOpenPerUser',
        details: open.map((workflow) => ({
          code: 'WorkflowLimitExceeded',
          target: workflow.id,
          message: `Workflow ${workflow.id} is open: last used at ${workflow.lastUsedAt}, it expires at ${workflow.expiresAt} unless used again.`,
        })),
      },
    ),
  notInWorkflow: (path: string) =>
    new ServiceError('InvalidRequest', `${path} cannot be part of a workflow; send it without Workflow-Id and Workflow-Index.`, {
      target: 'Workflow-Id',
    }),
  /** A request of a $batch naming a workflow the batch does not: it would be done at once, for good. */
  inBatchPart: () =>
    new ServiceError(
      'InvalidRequest',
      'Workflow-Id and Workflow-Index go on the $batch request itself, which is then one request of that workflow; a request of the batch cannot name another.',
      { target: 'Workflow-Id' },
    ),
  /** Rows a stored request changed were changed outside the workflow since it ran (row versions). */
  changedOutside: (request: RequestRef, details: readonly ErrorDetail[]) =>
    new ServiceError(
      'Conflict',
      `Rows that ${describe(request)} changes were changed outside the workflow since; nothing of it is saved. ` +
        'The workflow stays open: abort it and start again from the current data.',
      { details },
    ),
  /** A request creates an entity under the key of one the workflow deleted (workflow-rebuild.ts refuseRecreated). */
  recreated: (label: string, deleter: RequestRef) =>
    new ServiceError(
      'Conflict',
      `${label} was deleted by ${describe(deleter)}; a workflow cannot create it again under the same key. ` +
        'Create it under a new key, or commit the workflow first.',
      { target: label },
    ),
  /**
   * A stored request fails when replayed: a permission its user lost since, validation and a
   * method's refusal (the business judging today's data, as validation does) stay what they
   * are; anything else is a conflict.
   */
  noLongerApplies: (request: RequestRef, error: ServiceError) =>
    error.code === 'Forbidden'
      ? new ServiceError('Forbidden', `${capitalised(describe(request))} is no longer allowed: ${error.message}`)
      : error.code === 'MethodRefused'
      ? new ServiceError('MethodRefused', `${capitalised(describe(request))} is now refused: ${error.message}`, { target: error.target })
      : error.code === 'ValidationFailed'
      ? new ServiceError('ValidationFailed', `${capitalised(describe(request))} now fails validation: ${error.message}`, {
          details: error.details,
          omittedDetails: error.omittedDetails,
        })
      : new ServiceError('Conflict', `${capitalised(describe(request))} no longer applies: ${error.message}`, {
          details: error.details,
          omittedDetails: error.omittedDetails,
          target: error.target,
        }),
  /** A stored request this version cannot apply: stored before workflows kept write plans, or by a later version. */
  storedOtherwise: (id: string, request: RequestRef) =>
    new ServiceError(
      'Conflict',
      `Workflow ${id} cannot go on: ${describe(request)} was stored by another version of entityctl, in a form this one does not apply. ` +
        'Abort the workflow and start it again.',
      { target: 'Workflow-Id' },
    ),
  /** A safe retry whose caller no longer holds the access its stored answer was given with. */
  answeredWithOtherAccess: (request: RequestRef) =>
    new ServiceError(
      'Forbidden',
      `${capitalised(describe(request))} was answered with permissions you do not hold now, so its answer is not given again.`,
    ),
  busy: () => new ServiceError('Conflict', 'The workflow met a concurrent change of the same rows; send the request again.'),
}

function capitalised(text: string): string {
  return text[0].toUpperCase() + text.slice(1)
}
