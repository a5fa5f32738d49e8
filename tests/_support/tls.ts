/** A self-signed certificate for a loopback HTTPS server in a test or a bench. */

/** Writes `key.pem` and `cert.pem` for the IP `ip` into `dir` with openssl; returns their paths. */
export async function selfSignedCert(
  dir: string,
  ip: string,
): Promise<{ key: string; cert: string }> {
  const key = `${dir}/key.pem`;
  const cert = `${dir}/cert.pem`;
  const made = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      `/CN=${ip}`,
      "-addext",
      `subjectAltName=IP:${ip}`,
      "-keyout",
      key,
      "-out",
      cert,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!made.success) throw new Error(`openssl failed: ${new TextDecoder().decode(made.stderr)}`);
  return { key, cert };
}
