#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx so that a fresh clone needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
