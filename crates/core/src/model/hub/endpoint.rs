//! Which server is asked: the Hub's origin, the CLI's `HF_ENDPOINT`, the app's loopback stub for
//! the end-to-end tests, and how long a request may take.

use super::request::HubError;
use crate::base::error::shorten;

/// The only origin the app and the CLI fetch from (the page's `connect-src` allows exactly it).
pub const HUB_ORIGIN: &str = "https://huggingface.co";

/// How long one request may take before it is given up (seconds).
pub const TIMEOUT_S: u64 = 20;

/// The base URL for the CLI: [`HUB_ORIGIN`], or the value of `HF_ENDPOINT` (the variable
/// `huggingface_hub` reads; tests point it at a loopback stub, a mirror may use it too). It
/// must be an `http://` or `https://` address without a query.
pub fn endpoint_override(env: Option<&str>) -> Result<String, HubError> {
    let Some(v) = env.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(HUB_ORIGIN.to_string());
    };
    let rest = v
        .strip_prefix("https://")
        .or_else(|| v.strip_prefix("http://"));
    match rest {
        Some(r) if !r.is_empty() && !r.contains(['?', '#', ' ', '@']) => {
            Ok(v.trim_end_matches('/').to_string())
        }
        _ => Err(HubError::BadEndpoint { given: shorten(v) }),
    }
}

/// The app's base URL from the page's `<meta name="hf-endpoint">`, accepted only when it is a
/// loopback address with a port (`http://127.0.0.1:PORT`, `http://localhost:PORT`,
/// `http://[::1]:PORT`): the end-to-end tests' stub. The shipped page has no such tag, and
/// anything else (another host, a path, a query) is ignored, so the app fetches from
/// [`HUB_ORIGIN`]; its Content-Security-Policy allows no other origin anyway.
pub fn loopback_endpoint(meta: &str) -> Option<String> {
    let rest = meta.trim().strip_prefix("http://")?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let port = ["127.0.0.1:", "localhost:", "[::1]:"]
        .iter()
        .find_map(|h| rest.strip_prefix(h))?;
    let ok = !port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit());
    ok.then(|| format!("http://{rest}"))
}

#[cfg(test)]
mod tests {
    use super::super::request::{HubFile, ModelId};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn endpoints_production_and_tests() {
        assert_eq!(endpoint_override(None).as_deref(), Ok(HUB_ORIGIN));
        assert_eq!(endpoint_override(Some("  ")).as_deref(), Ok(HUB_ORIGIN));
        assert_eq!(
            endpoint_override(Some("http://127.0.0.1:4000/")).as_deref(),
            Ok("http://127.0.0.1:4000")
        );
        assert_eq!(
            endpoint_override(Some("https://hf-mirror.example")).as_deref(),
            Ok("https://hf-mirror.example")
        );
        for bad in [
            "ftp://x",
            "127.0.0.1:4000",
            "http://",
            "http://a?b",
            "http://u@h",
        ] {
            assert_eq!(
                endpoint_override(Some(bad)).map_err(|e| e.kind()),
                Err("bad_endpoint"),
                "{bad}"
            );
        }
        // The app's meta tag: loopback with a port only.
        for (meta, want) in [
            ("http://127.0.0.1:43210", Some("http://127.0.0.1:43210")),
            ("http://localhost:8/", Some("http://localhost:8")),
            ("http://[::1]:9000", Some("http://[::1]:9000")),
            ("https://huggingface.co", None),
            ("http://127.0.0.1", None),
            ("http://127.0.0.1:80/x", None),
            ("http://127.0.0.1:99999999", None),
            ("http://127.0.0.1.evil.example:80", None),
            ("http://localhost:80@evil.example", None),
            ("", None),
        ] {
            assert_eq!(loopback_endpoint(meta).as_deref(), want, "{meta}");
        }
    }

    proptest! {
        /// No text panics the reader, and an id it accepts makes URLs that stay on the base's
        /// host, in its path, with no `..`, query or fragment.
        #[test]
        fn any_text_is_safe(s in "\\PC{0,120}", t in "[a-zA-Z0-9._/:%?#@-]{0,60}") {
            for input in [s.as_str(), t.as_str()] {
                if let Ok(m) = ModelId::parse(input) {
                    for f in [HubFile::Config, HubFile::Api, HubFile::Index] {
                        let url = f.url(HUB_ORIGIN, &m);
                        let path = url.strip_prefix("https://huggingface.co/").unwrap_or("");
                        prop_assert!(!path.is_empty());
                        prop_assert!(!path.contains("..") && !path.contains(['?', '#', '@', ':', '\\', '%']));
                    }
                }
                let _ = loopback_endpoint(input);
                let _ = endpoint_override(Some(input));
            }
        }
    }
}
