import { workerData } from 'node:worker_threads';
import { unpackNow } from './untar';

/** Run in a worker thread by unpackTemplate (pglite-template.ts); a failure fails the worker, which it reports. */
const { archive, pgdata } = workerData as { archive: string; pgdata: string };
unpackNow(archive, pgdata);
