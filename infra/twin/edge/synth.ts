/**
 * Synthesizes the prod stack's template into the directory named (argv[2]) for the twin's edge,
 * with cdk.json's feature flags as the CDK CLI gives them (CDK_CONTEXT_JSON): the template only,
 * so its functions are not bundled (the twin builds its own bundles), and cdk-nag runs as in
 * `npm run synth`.
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { buildApp } from '../../app';
import { EDGE_CONTEXT } from './template';

const outdir = process.argv[2];
if (!outdir) throw new Error('usage: synth.ts <outdir>');
const { context } = JSON.parse(readFileSync(new URL('../../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
process.env.CDK_CONTEXT_JSON = JSON.stringify(context);
buildApp(new App({ outdir, context: { ...EDGE_CONTEXT, 'aws:cdk:bundling-stacks': [] } })).app.synth();
