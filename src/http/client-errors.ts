import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ErrorBody } from '../shared/errors';

const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'Request headers are too large',
  ERR_HTTP_REQUEST_TIMEOUT: 'Request was not received in time',
};

/**
 * Requests Node refuses before the app sees them (headers over its 16 KiB limit, a malformed request
 * line, a request that never finishes arriving) get the same error body as every other error. Node's
 * own answer is a bare 400, 408 or 431 with no body; the contract's error names have neither 408 nor
 * 431, so all of them are a BadRequest whose message says what was wrong.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // Nothing can be answered on a connection the client has dropped, or once a response has begun.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as Socket).bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const body: ErrorBody = { status: 400, name: 'BadRequest', message: MESSAGES[err.code ?? ''] ?? 'Malformed HTTP request' };
    const text = JSON.stringify(body);
    socket.end(
      'HTTP/1.1 400 Bad Request\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(text)}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n\r\n' +
        text,
    );
  });
}
