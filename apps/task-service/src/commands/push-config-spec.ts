import { invalidParams, type TaskPushNotificationConfig } from '@lib/a2a-protocol';
import { checkWebhookUrl } from '@lib/push';
import type { PushConfigSpec } from '../write/task-store';

/** An HTTP auth scheme is a token (RFC 9110 §11.1, §5.6.2): it goes verbatim into `Authorization`. */
const AUTH_SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What may stand in a header value the dispatcher builds: visible ASCII and spaces, no line breaks. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/**
 * The webhook a client's TaskPushNotificationConfig describes, checked before anything is written: a URL the
 * dispatcher may call (http or https, a host, no user info; where it may call is checked again, on the
 * address actually dialled, at delivery), and an authentication scheme, credentials and token that can be
 * sent as header values. `field` is where the config sits in the request (`""` for CreateTaskPushNotification
 * Config, `configuration.taskPushNotificationConfig.` inline).
 */
export function pushConfigSpec(
  config: TaskPushNotificationConfig,
  configId: string,
  field = '',
): { spec: PushConfigSpec; origin: string } {
  const checked = checkWebhookUrl(config.url);
  if (!checked.ok) {
    throw invalidParams([{ field: `${field}url`, description: checked.reason }]);
  }
  const violations: { field: string; description: string }[] = [];
  if (config.token !== undefined && !HEADER_VALUE.test(config.token)) {
    violations.push({
      field: `${field}token`,
      description: 'must be printable ASCII: it is sent in the X-A2A-Notification-Token header',
    });
  }
  const auth = config.authentication;
  if (auth && !AUTH_SCHEME.test(auth.scheme)) {
    violations.push({
      field: `${field}authentication.scheme`,
      description: 'must be an HTTP authentication scheme such as Bearer or Basic',
    });
  }
  if (auth?.credentials !== undefined && !HEADER_VALUE.test(auth.credentials)) {
    violations.push({
      field: `${field}authentication.credentials`,
      description: 'must be printable ASCII: it is sent in the Authorization header',
    });
  }
  if (violations.length > 0) {
    throw invalidParams(violations);
  }
  return {
    spec: {
      configId,
      // As sent (clients compare what they get back); the dispatcher parses it the same way again.
      url: config.url,
      ...(config.token !== undefined ? { token: config.token } : {}),
      ...(auth
        ? {
            authentication: {
              scheme: auth.scheme,
              ...(auth.credentials !== undefined ? { credentials: auth.credentials } : {}),
            },
          }
        : {}),
    },
    origin: checked.url.origin,
  };
}
