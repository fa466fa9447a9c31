/* global process */
// Preloaded into the service (NODE_OPTIONS=--require) by startInteropService: startServerProcess picks
// the port itself and passes it as PORT, so ISSUER cannot be written before the start. This sets it to
// the service's own loopback URL, the one the client libraries discover from, before the config loads.
process.env.ISSUER = `http://127.0.0.1:${process.env.PORT}`;
