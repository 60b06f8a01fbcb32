import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import type { ArtifactStore } from '@webutil/kit/artifacts';
import { MonitorServiceService } from '@webutil/proto/webutil/monitor/v1/monitor';
import type { Monitors } from './monitors.js';
import { readImage } from './run-images.js';

/** The monitor service's RPCs: each is one call of the monitors' book (monitors.ts). */
export function monitorService(monitors: Monitors, images: ArtifactStore, log: Logger): ServiceBinding {
  return bind(
    MonitorServiceService,
    {
      createMonitor: async (request) => ({ monitor: await monitors.create(request) }),
      listMonitors: async (request) => ({ monitors: await monitors.list(request.owner) }),
      getMonitor: async (request) => ({ monitor: await monitors.get(request.owner, request.id) }),
      updateMonitor: async (request) => ({ monitor: await monitors.update(request) }),
      deleteMonitor: async (request) => {
        await monitors.delete(request.owner, request.id);
        return { id: request.id, deleted: true };
      },
      pauseMonitor: async (request) => ({ monitor: await monitors.pause(request.owner, request.id) }),
      resumeMonitor: async (request) => ({ monitor: await monitors.resume(request.owner, request.id) }),
      listRuns: (request) =>
        monitors.runs(request.owner, request.monitorId, {
          from: request.from,
          to: request.to,
          limit: request.limit,
          pageToken: request.pageToken,
        }),
      listIncidents: async (request) => ({
        incidents: await monitors.incidents(request.owner, request.monitorId, request.limit),
      }),
      readImage: (request, ctx, send) => readImage(request, images, ctx, send),
    },
    log,
  );
}
