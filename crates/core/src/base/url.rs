//! URL encodings: percent-encoding (RFC 3986) and base64url (RFC 4648 §5, no padding).

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding (RFC 4648 §5).
pub fn base64url_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextets = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        for s in sextets.iter().take(chunk.len() + 1) {
            out.push(char::from(B64[*s as usize]));
        }
    }
    out
}

/// Decodes base64url (padding and standard `+/` accepted); `None` on any invalid input.
pub fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 3);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
        acc &= (1 << bits) - 1;
    }
    // A single leftover sextet cannot come from a valid encoding.
    if bits >= 6 {
        return None;
    }
    Some(out)
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn pct_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
    out
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Percent-decodes (`+` is a space); invalid escapes stay as they are, invalid UTF-8 is replaced.
pub fn pct_decode(s: &str) -> String {
    String::from_utf8_lossy(&decode_bytes(s, false).unwrap_or_default()).into_owned()
}

/// Percent-decodes strictly (`+` is a space): `None` on an invalid escape or invalid UTF-8, for
/// values that must round-trip exactly (a custom accelerator's name).
pub fn pct_decode_strict(s: &str) -> Option<String> {
    String::from_utf8(decode_bytes(s, true)?).ok()
}

/// The byte of the escape `%XY` at `i` (two hexadecimal digits, nothing else: no sign).
fn escape_at(b: &[u8], i: usize) -> Option<u8> {
    let hi = char::from(*b.get(i + 1)?).to_digit(16)?;
    let lo = char::from(*b.get(i + 2)?).to_digit(16)?;
    u8::try_from((hi << 4) | lo).ok()
}

/// The bytes of `s` with `+` as a space and `%XY` escapes decoded. An invalid escape is kept as
/// text, or with `strict` makes the whole value `None`.
fn decode_bytes(s: &str, strict: bool) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            match escape_at(b, i) {
                Some(v) => {
                    out.push(v);
                    i += 3;
                    continue;
                }
                None if strict => return None,
                None => {}
            }
        }
        out.push(if c == b'+' { b' ' } else { c });
        i += 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{pct_decode, pct_decode_strict};

    /// Both readings decode the same escapes and `+`; they differ only on a bad escape, which
    /// the lenient one keeps as text and the strict one refuses, sign characters included
    /// (`u8::from_str_radix` would have read `%+1` as byte 1).
    #[test]
    fn lenient_and_strict_agree_except_on_bad_escapes() {
        for (text, want) in [
            ("A100%2080GB", "A100 80GB"),
            ("a+b%2Bc", "a b+c"),
            ("%ED%95%9C", "한"),
        ] {
            assert_eq!(pct_decode(text), want);
            assert_eq!(pct_decode_strict(text).as_deref(), Some(want));
        }
        for bad in ["%+1", "%-1", "%4", "%zz", "100%"] {
            assert_eq!(pct_decode_strict(bad), None, "{bad}");
            assert_eq!(pct_decode(bad), bad.replace('+', " "), "{bad}");
        }
        assert_eq!(pct_decode_strict("%FF"), None);
        assert_eq!(pct_decode("%FF"), "\u{fffd}");
    }
}
