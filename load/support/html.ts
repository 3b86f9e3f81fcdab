/** Text and JSON made safe to put in a report's HTML, shared by the report's parts. */

/** JSON that may sit inside a <script> element: no "</script>" or "<!--" can appear in it. */
export const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
export const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
export const cell = (value: unknown) => `<td>${escapeHtml(typeof value === 'string' ? value : JSON.stringify(value))}</td>`;
