import { Controller, Get } from '@nestjs/common';
import { ADMIN_OPENAPI } from './openapi';

/** Serves the admin API's OpenAPI document; public, like any API description. */
@Controller('admin/v1')
export class OpenApiController {
  @Get('openapi.json')
  document(): typeof ADMIN_OPENAPI {
    return ADMIN_OPENAPI;
  }
}
