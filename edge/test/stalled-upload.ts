import net from 'node:net';

/**
 * An XBEL-to-HTML upload (one credit) over a raw socket whose body stalls after its first bytes:
 * once authorized it holds its credit, and its place among the client's uploads in flight, until
 * the socket is destroyed.
 */
export function stalledUpload(port: number, apiKey: string): net.Socket {
  const boundary = 'stalled-upload';
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  socket.write(
    `POST /v1/xbel-to-html HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer ${apiKey}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${1024 * 1024}\r\n\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.xbel"\r\n\r\n<xbel>`,
  );
  return socket;
}
