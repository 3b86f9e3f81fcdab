/**
 * zod's mini API, which every schema in Lambda code is written with: its functions tree-shake, so a
 * bundle carries only the zod it uses instead of all of zod classic. Import it as a namespace,
 * `import * as z from '…/shared/platform/zod'`: esbuild then keeps only what is used, while a named
 * `import { z }` would keep every export of zod.
 *
 * zod/mini ships without a locale, and then every issue reads "Invalid input". English, the messages
 * clients and logs saw with zod classic, is installed here, before any schema can parse.
 */
import { en } from 'zod/locales';
import { config } from 'zod/mini';

config(en());

export * from 'zod/mini';
