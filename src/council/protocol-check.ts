import { HEADERLESS_PROTOCOL, PROTOCOL_VERSION } from '../protocol/wire.js';
import { CouncilHttpError } from './http-error.js';

/**
 * The council's half of the version check (the forge's half reads /v1/health): the refusal for a
 * request whose `Kourai-Protocol` header is not this council's version, or null to serve it. No
 * header means a forge from before the header (protocol v1). 400, not 426: 426 Upgrade Required
 * is about switching the HTTP connection's protocol and must name one in an Upgrade header, and the
 * side to upgrade may be the council; 505 is about the HTTP version.
 */
export function protocolRefusal(header: string | string[] | undefined): CouncilHttpError | null {
  const text = Array.isArray(header) ? header.join(', ') : header;
  if (text === PROTOCOL_VERSION.toString()) return null;
  if (text === undefined) {
    return new CouncilHttpError(
      'protocol_mismatch',
      `this council speaks protocol v${PROTOCOL_VERSION}; the request has no Kourai-Protocol header, so it comes from a forge older than the header (protocol v${HEADERLESS_PROTOCOL}): upgrade kourai on the forge`,
      { council_protocol: PROTOCOL_VERSION, request_protocol: HEADERLESS_PROTOCOL, header: null },
    );
  }
  const shown = text.slice(0, 40);
  if (!/^[1-9]\d{0,5}$/.test(text)) {
    return new CouncilHttpError(
      'protocol_mismatch',
      `the request's Kourai-Protocol header ${JSON.stringify(shown)} is not a protocol version (a whole number); this council speaks protocol v${PROTOCOL_VERSION}`,
      { council_protocol: PROTOCOL_VERSION, request_protocol: null, header: shown },
    );
  }
  const v = Number(text);
  const who =
    v > PROTOCOL_VERSION
      ? 'the council runs an older kourai than the forge'
      : 'the forge runs an older kourai than the council';
  return new CouncilHttpError(
    'protocol_mismatch',
    `this council speaks protocol v${PROTOCOL_VERSION}; the request speaks v${v} (${who})`,
    { council_protocol: PROTOCOL_VERSION, request_protocol: v, header: text },
  );
}
