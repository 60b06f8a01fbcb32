/** Where the monitor service's replies differ from the REST shapes: the JSON it keeps, presented as objects. */
import type {
  ListMonitorsResponse,
  ListRunsResponse,
  Monitor,
  MonitorOwner,
  Run,
} from '@webutil/proto/webutil/monitor/v1/monitor';
import { HttpError } from '../../envelope.js';
import type { Caller } from '../../route-spec.js';

const parsed = (json: string | undefined) => (json === undefined ? null : (JSON.parse(json) as object));

export const presentMonitor = ({ inputJson, ...rest }: Monitor) => ({ ...rest, input: parsed(inputJson) ?? {} });

export const presentMonitorReply = (reply: { monitor?: Monitor }) => reply.monitor && presentMonitor(reply.monitor);

export const presentMonitorList = (reply: ListMonitorsResponse) => ({ monitors: reply.monitors.map(presentMonitor) });

/** Where a run's stored image is read (monitorImageDownloads), by the name the run gives. */
export const MONITOR_IMAGE_PATH = '/v1/monitor-images';

const presentRun = ({ changesJson, resultJson, ...rest }: Run) => {
  const changes = parsed(changesJson) as { diffImage?: string } | null;
  return {
    ...rest,
    changes,
    result: parsed(resultJson),
    diffImageUrl: changes?.diffImage ? `${MONITOR_IMAGE_PATH}/${changes.diffImage}` : null,
  };
};

export const presentRunList = (reply: ListRunsResponse) => ({
  runs: reply.runs.map(presentRun),
  nextPageToken: reply.nextPageToken,
});

/** Whose monitors: the caller's account, with its plan's bounds. A test key's sandbox has none. */
export function ownerOf(caller: Caller): MonitorOwner {
  if (caller.sandbox === true) {
    throw new HttpError(
      403,
      'live_key_required',
      'monitors run real checks and spend credits: use a live API key or the account page',
    );
  }
  return { subject: caller.subject, sandbox: false, plan: caller.quota.plan ?? 'FREE' };
}
