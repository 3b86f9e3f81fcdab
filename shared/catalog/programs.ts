import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import * as z from '../platform/zod';
import { callBudgetMs } from '../platform/deadline';
import { db } from '../platform/clients/mysql';

export const PROGRAM_TYPES = ['bootcamp', 'course', 'mentoring', 'workshop'] as const;
const CareerTag = z.string().check(z.regex(/^[a-z0-9-]{1,50}$/, 'use 1–50 of a–z, 0–9 and -'));
/** `a,b,c` as ['a', 'b', 'c']. */
const commaList = z.pipe(
  z.string(),
  z.transform((raw) => raw.split(',')),
);

/** Query string of GET /programs; unknown types, pages below 1 and sizes above 50 are refused. */
export const ProgramQuery = z.strictObject({
  careerTag: z.optional(CareerTag),
  // The OpenAPI document shows the comma list as what it is to a client (`types=course,workshop`), not as its input, a
  // string. Registered rather than a z.meta() check, which would add a call to every parse of the query.
  types: z
    .optional(
      z.pipe(
        z.pipe(commaList, z.array(z.enum(PROGRAM_TYPES)).check(z.minLength(1), z.maxLength(PROGRAM_TYPES.length))),
        z.transform((types) => [...new Set(types)].sort()),
      ),
    )
    .register(z.globalRegistry, { param: { style: 'form', explode: false }, override: { type: 'array', items: { type: 'string', enum: [...PROGRAM_TYPES] } } }),
  page: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(10_000)), 1),
  size: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(50)), 20),
});
export type ProgramQuery = z.infer<typeof ProgramQuery>;

export const ProgramInput = z.strictObject({
  title: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
  careerTag: CareerTag,
  type: z.enum(PROGRAM_TYPES),
  description: z._default(z.string().check(z.maxLength(2000)), ''),
});
export type ProgramInput = z.infer<typeof ProgramInput>;

export const Program = z.strictObject({ id: z.int(), title: z.string(), careerTag: z.string(), type: z.enum(PROGRAM_TYPES), description: z.string() });
export type Program = z.infer<typeof Program>;

export const ProgramPage = z.strictObject({ page: z.int(), size: z.int(), total: z.int(), items: z.array(Program) });
export type ProgramPage = z.infer<typeof ProgramPage>;

/** One cache entry per distinct query: the same query always normalises to the same key. */
export function normaliseQuery(q: ProgramQuery): string {
  return `tag=${q.careerTag ?? '*'}&types=${q.types?.join(',') ?? '*'}&page=${q.page}&size=${q.size}`;
}

/** Well under the functions' 10 s timeout; less when the invocation has less left (a fill taken over after a wait). */
const PAGE_QUERY_TIMEOUT_MS = 8_000;

/** One SQL query per page, the total included (a window count), so a fill costs exactly one query. */
export async function loadProgramPage(q: ProgramQuery, deadline?: () => number): Promise<ProgramPage> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.careerTag) {
    where.push('career_tag = ?');
    params.push(q.careerTag);
  }
  if (q.types) {
    where.push('type IN (?)');
    params.push(q.types);
  }
  const [rows] = await db().query<RowDataPacket[]>(
    {
      sql: `SELECT id, title, career_tag, type, description, COUNT(*) OVER () AS total
       FROM programs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY id LIMIT ? OFFSET ?`,
      // A page MySQL cannot give in time is a 503 (retry), not the function's timeout (a 500).
      timeout: callBudgetMs(PAGE_QUERY_TIMEOUT_MS, deadline?.()),
    },
    [...params, q.size, (q.page - 1) * q.size],
  );
  return {
    page: q.page,
    size: q.size,
    total: Number(rows[0]?.total ?? 0),
    items: rows.map((r) => ({ id: Number(r.id), title: r.title, careerTag: r.career_tag, type: r.type, description: r.description })),
  };
}

/** The row only: the cached pages are not told. Admin writes go through createProgram and changeProgram (cached-programs.ts), which tell them. */
export async function insertProgram(input: ProgramInput): Promise<Program> {
  const [result] = await db().query<ResultSetHeader>('INSERT INTO programs (title, career_tag, type, description) VALUES (?, ?, ?, ?)', [
    input.title,
    input.careerTag,
    input.type,
    input.description,
  ]);
  return { id: result.insertId, ...input };
}

/** The row only, as insertProgram. */
export async function updateProgram(id: number, input: ProgramInput): Promise<Program | undefined> {
  const [result] = await db().query<ResultSetHeader>('UPDATE programs SET title = ?, career_tag = ?, type = ?, description = ? WHERE id = ?', [
    input.title,
    input.careerTag,
    input.type,
    input.description,
    id,
  ]);
  return result.affectedRows ? { id, ...input } : undefined;
}
