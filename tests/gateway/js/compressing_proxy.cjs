// A reverse proxy that compresses what it forwards, as Next.js's server does (`compress: true`
// uses the same `compression` middleware): what it may compress, zlib holds until its buffer
// fills or the response ends. It prints its port on stdout and forwards everything to $TARGET.
const http = require("node:http");
const compression = require("compression");
const httpProxy = require("http-proxy");

const proxy = httpProxy.createProxyServer({ target: process.env.TARGET });
proxy.on("error", (err, req, res) => {
  res.writeHead(502, { "Content-Type": "text/plain" });
  res.end(String(err));
});
const compress = compression();
const server = http.createServer((req, res) => compress(req, res, () => proxy.web(req, res)));
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
