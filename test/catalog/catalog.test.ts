import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { httpEvent, lambdaContext } from '../support/events';
import { signedInUsers, type SignedInUser } from '../support/sessions';
import { route } from '../support/routes';

const createProgram = await route('create-program');
const listPrograms = await route('list-programs');
const updateProgram = await route('update-program');

type Result = APIGatewayProxyStructuredResultV2;
const body = (r: Result) => JSON.parse(r.body ?? 'null');

function list(query: string) {
  const event = httpEvent('get-me', { path: '/programs' });
  event.rawQueryString = query;
  event.queryStringParameters = Object.fromEntries(new URLSearchParams(query));
  return listPrograms(event, lambdaContext());
}

function write(cookie: string, method: 'POST' | 'PUT', payload: unknown, id?: string) {
  return (method === 'POST' ? createProgram : updateProgram)(
    httpEvent('post-sessions', {
      method,
      path: id ? `/programs/${id}` : '/programs',
      ...(id ? { pathParameters: { id } } : {}),
      cookies: [cookie],
      body: payload,
    }),
    lambdaContext(),
  );
}

describe('the catalog', () => {
  let admin: SignedInUser;
  let user: SignedInUser;
  // A tag of this test run's own, so other tests' programs do not show up.
  const tag = `t-${Date.now().toString(36)}`;

  beforeAll(async () => {
    admin = (await signedInUsers(1, 'admin'))[0]!;
    user = (await signedInUsers(1))[0]!;
    for (let i = 0; i < 7; i++) {
      await write(admin.cookie, 'POST', { title: `Program ${i}`, careerTag: tag, type: i % 2 ? 'course' : 'bootcamp' });
    }
  });

  it('pages through programs filtered by tag and type', async () => {
    const first = body(await list(`careerTag=${tag}&types=course,bootcamp&size=5`));
    const second = body(await list(`careerTag=${tag}&types=bootcamp,course&page=2&size=5`));
    const courses = body(await list(`careerTag=${tag}&types=course`));

    expect(first).toMatchObject({ page: 1, size: 5, total: 7 });
    expect(first.items).toHaveLength(5);
    expect(second.items).toHaveLength(2);
    expect(courses.items.map((p: { type: string }) => p.type)).toEqual(['course', 'course', 'course']);
  });

  it('shows a committed admin write on the very next read', async () => {
    const before = body(await list(`careerTag=${tag}&types=course`));
    const target = before.items[0];

    await write(admin.cookie, 'PUT', { title: 'Renamed', careerTag: tag, type: 'course' }, String(target.id));
    const after = body(await list(`careerTag=${tag}&types=course`));

    expect(after.items[0]).toMatchObject({ id: target.id, title: 'Renamed' });
  });

  it.each([
    ['size above 50', 'size=51'],
    ['page 0', 'page=0'],
    ['an unknown type', 'types=course,seminar'],
    ['an empty type list', 'types='],
    ['a tag with a wildcard', 'careerTag=back*'],
    ['an unknown parameter', 'sort=title'],
  ])('answers %s with 400', async (_, query) => {
    const result = await list(query);

    expect(result.statusCode).toBe(400);
    expect(body(result).error.code).toBe('VALIDATION_FAILED');
  });

  it('lets only admins write', async () => {
    const result = await write(user.cookie, 'POST', { title: 'Sneaky', careerTag: tag, type: 'course' });

    expect(result.statusCode).toBe(403);
    expect(body(await list(`careerTag=${tag}`)).total).toBe(7);
  });

  it('answers an update of a missing program with 404', async () => {
    expect((await write(admin.cookie, 'PUT', { title: 'x', careerTag: tag, type: 'course' }, '999999999')).statusCode).toBe(404);
  });
});
