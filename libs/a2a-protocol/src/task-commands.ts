import type { TaskCommandServiceService } from './generated/platform/task/v1/task_service';

/**
 * The operations of the internal TaskCommandService (`proto/platform/task/v1/task_service.proto`) by their
 * method name, as the ingress calls them and the task-service serves them.
 */
export type TaskCommandMethod = keyof typeof TaskCommandServiceService;
