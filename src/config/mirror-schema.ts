import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { serviceName } from './org-schema.js';

const featureServices = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  )
  .pipe(z.array(serviceName.refine((name) => name.endsWith('.FeatureServer'), 'feature services: folder/name.FeatureServer')));

/** The variables of the PostGIS mirror (docs/mirror.md), spread into the environment's schema. */
export const mirrorEnvShape = {
  /** Feature services kept as PostgreSQL/PostGIS tables, comma-separated. @defaultValue the CHANGES services, when MIRROR_DATABASE_URL is set */
  MIRROR: featureServices.optional(),
  /** The PostgreSQL the mirror writes to: a `postgres://` (or `postgresql://`) URL. */
  MIRROR_DATABASE_URL: z
    .string()
    .refine((value) => URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol), 'a postgres:// URL')
    .optional(),
  /** The schema the mirror's tables and `mirror_state` are in. @defaultValue 'geohook' */
  MIRROR_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier: letters, digits and _, at most 63')
    .default('geohook'),
  /** Keep each attachment's bytes in the attachments tables (`data`), not only its metadata and SHA-256. @defaultValue false */
  MIRROR_ATTACHMENT_BYTES: z
    .enum(['true', 'false'], { error: 'true or false' })
    .transform((value) => value === 'true')
    .default(false),
};

/** The PostGIS mirror's settings (docs/mirror.md); `undefined` in the configuration when nothing is mirrored. */
export interface MirrorConfig {
  /** Feature services mirrored (MIRROR, else the CHANGES services): `folder/name.FeatureServer`. */
  readonly services: readonly string[];
  /** MIRROR_DATABASE_URL; `undefined` with MIRROR alone: `geohook up` starts a local PostgreSQL, `geohook serve` refuses. */
  readonly databaseUrl: string | undefined;
  /** MIRROR_SCHEMA. @defaultValue 'geohook' */
  readonly schema: string;
  /** MIRROR_ATTACHMENT_BYTES: the attachments tables keep the bytes too. @defaultValue false */
  readonly attachmentBytes: boolean;
}

type MirrorVariables = {
  MIRROR?: string[] | undefined;
  MIRROR_DATABASE_URL?: string | undefined;
  MIRROR_SCHEMA: string;
  MIRROR_ATTACHMENT_BYTES: boolean;
};

/**
 * The mirror's settings from its variables: MIRROR, or with MIRROR_DATABASE_URL alone the CHANGES services; none
 * when there are no services to mirror. Without ADMIN_URL, the services are left to `geohook up`, whose emulator
 * they are on (MIRROR, else its Parcels): `services` is then empty with MIRROR unset, and `geohook serve` refuses
 * it ({@link ConfigError} from {@link mirrorServerOf}).
 */
export function mirrorConfigOf(
  vars: MirrorVariables,
  changesServices: readonly string[],
  adminUrl: string | undefined,
): MirrorConfig | undefined {
  if (vars.MIRROR === undefined && vars.MIRROR_DATABASE_URL === undefined) return undefined;
  const services = vars.MIRROR ?? changesServices;
  // A database without services (MIRROR and CHANGES unset, as docker-compose.yml leaves them) mirrors nothing
  // on a server; `geohook up` mirrors its emulator's Parcels there.
  if (services.length === 0 && adminUrl !== undefined) return undefined;
  return {
    services: [...new Set(services)],
    databaseUrl: vars.MIRROR_DATABASE_URL,
    schema: vars.MIRROR_SCHEMA,
    attachmentBytes: vars.MIRROR_ATTACHMENT_BYTES,
  };
}

/**
 * What a server needs to run the mirror: the admin root its services are on and the database it writes to.
 * Throws {@link ConfigError} naming the variable that is missing.
 */
export function mirrorServerOf(mirror: MirrorConfig, adminUrl: string | undefined): { adminUrl: string; databaseUrl: string } {
  if (adminUrl === undefined) {
    throw new ConfigError(
      'ADMIN_URL: required with MIRROR or MIRROR_DATABASE_URL (an http(s) URL of the admin root; geohook up mirrors its own emulator without it)',
    );
  }
  if (mirror.databaseUrl === undefined) {
    throw new ConfigError(
      'MIRROR_DATABASE_URL: required with MIRROR (a postgres:// URL; geohook up starts a local PostgreSQL when it is unset)',
    );
  }
  return { adminUrl, databaseUrl: mirror.databaseUrl };
}
