import type { ServiceError } from '@webutil/kit';

/** The ServiceError a call failed with; a call that succeeds fails the test. */
export async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected a failure');
}
