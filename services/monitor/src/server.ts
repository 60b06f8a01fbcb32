import { bind, type Logger, type ServiceBinding, unavailable } from '@webutil/kit';
import { MonitorServiceService } from '@webutil/proto/webutil/monitor/v1/monitor';

const notYet = () => Promise.reject(unavailable('not_implemented', 'monitors are not served yet'));

/** The monitor service's RPCs (the skeleton: each answers UNAVAILABLE until its handler lands). */
export function monitorService(log: Logger): ServiceBinding {
  return bind(
    MonitorServiceService,
    {
      createMonitor: notYet,
      listMonitors: notYet,
      getMonitor: notYet,
      updateMonitor: notYet,
      deleteMonitor: notYet,
      pauseMonitor: notYet,
      resumeMonitor: notYet,
      listRuns: notYet,
      listIncidents: notYet,
    },
    log,
  );
}
