//! The Hugging Face Hub, opt-in: where a model's files live and how its answers are read.
//!
//! Pure: nothing here touches the network. The CLI (`llmcalc model --hf ORG/NAME`, a blocking
//! HTTPS client) and the app (the browser's `fetch`, only when the user presses the button)
//! make the requests; both build the URLs with [`HubFile::url`] and hand each answer's status
//! code and body to [`read_config`], [`read_api`] or [`read_index`], which turn it into data or
//! a [`HubError`] whose sentence (English and Korean) says what happened and what to do.
//!
//! The URL layout (the Hub's, as `huggingface_hub` uses it):
//!
//! | file | URL |
//! |---|---|
//! | `config.json` | `{base}/{org}/{name}/resolve/main/config.json` |
//! | `model.safetensors.index.json` | `{base}/{org}/{name}/resolve/main/model.safetensors.index.json` |
//! | the model API | `{base}/api/models/{org}/{name}` (its `safetensors.parameters` per dtype, `safetensors.total`) |
//!
//! `base` is [`HUB_ORIGIN`]; only tests point it at a loopback stub ([`endpoint_override`],
//! [`loopback_endpoint`]). Only the model id is sent: no cookie, no token, no other data.
//!
//! The Hub's count is the number of elements the checkpoint's safetensors files store, per
//! dtype; [`compare`] sets it beside the calculator's count and explains the difference
//! (a vision tower or MTP layers the language model does not use, a tied head stored twice, a
//! quantized checkpoint packing several weights into one stored element). When the API gives no
//! count, the index's `metadata.total_parameters` is used, or else its `metadata.total_size`
//! divided by the bytes per parameter of the config's dtype (an estimate, said so).

use crate::core::base::dtype::Dtype;
use crate::core::base::error::{shorten, CalcError, Phrase};
use crate::core::base::i18n::Lang;
use crate::core::base::units::fmt_sig;
use crate::core::model::config::parse_model_text;
use crate::core::model::desc::{ModelDesc, ModelOrigin};
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// The only origin the app and the CLI fetch from (the page's `connect-src` allows exactly it).
pub const HUB_ORIGIN: &str = "https://huggingface.co";

/// How long one request may take before it is given up (seconds).
pub const TIMEOUT_S: u64 = 20;

/// The longest organisation or repository name the Hub accepts (characters).
pub const NAME_MAX: usize = 96;

/// A model id on the Hub, `ORG/NAME`, checked: ASCII letters, digits, `-`, `_` and `.`, each
/// part 1 to 96 characters, not starting or ending with `-` or `.`, no `--` or `..` (the Hub's
/// own rules, as `huggingface_hub.utils.validate_repo_id` states them). So it can be put in a
/// URL path as it is: it cannot climb out of the path (`..`), name another host, or carry a
/// query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub struct ModelId {
    org: String,
    name: String,
}

impl From<ModelId> for String {
    fn from(id: ModelId) -> String {
        id.to_string()
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.org, self.name)
    }
}

/// Whether one part of an id follows the Hub's rules.
fn valid_part(p: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    !p.is_empty()
        && p.len() <= NAME_MAX
        && p.chars().all(ok_char)
        && !p.starts_with(['-', '.'])
        && !p.ends_with(['-', '.'])
        && !p.contains("--")
        && !p.contains("..")
}

impl ModelId {
    /// Reads `ORG/NAME`, or the model page's address `https://huggingface.co/ORG/NAME` (a
    /// trailing `/` is ignored). A link to any other site is refused ([`HubError::OtherHost`]).
    pub fn parse(s: &str) -> Result<ModelId, HubError> {
        let t = s.trim();
        let bad = || HubError::BadId { given: shorten(t) };
        let t = [
            "https://huggingface.co/",
            "http://huggingface.co/",
            "huggingface.co/",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(t);
        if t.contains("://") || t.starts_with("//") || t.starts_with("www.") {
            return Err(HubError::OtherHost {
                given: shorten(s.trim()),
            });
        }
        let t = t.strip_suffix('/').unwrap_or(t);
        let (org, name) = t.split_once('/').ok_or_else(bad)?;
        if !valid_part(org) || !valid_part(name) || name.ends_with(".git") {
            return Err(bad());
        }
        Ok(ModelId {
            org: org.to_string(),
            name: name.to_string(),
        })
    }
}

/// One of the three things fetched for a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HubFile {
    /// `config.json`.
    Config,
    /// The model API's answer (`/api/models/ORG/NAME`).
    Api,
    /// `model.safetensors.index.json` (only sharded checkpoints have one).
    Index,
}

impl HubFile {
    /// The path after the base, starting with `/`.
    pub fn path(self, id: &ModelId) -> String {
        match self {
            HubFile::Config => format!("/{id}/resolve/main/config.json"),
            HubFile::Index => format!("/{id}/resolve/main/model.safetensors.index.json"),
            HubFile::Api => format!("/api/models/{id}"),
        }
    }

    /// The full URL under `base` (`https://huggingface.co`, or a test's stub).
    pub fn url(self, base: &str, id: &ModelId) -> String {
        format!("{}{}", base.trim_end_matches('/'), self.path(id))
    }

    /// The largest answer read (bytes): a config is a few KB (2 MiB, as a dropped file); the
    /// API's answer lists the repository's files (4 MiB); an index lists every tensor, about
    /// 10 MB for the largest models (16 MiB).
    pub const fn limit_bytes(self) -> usize {
        match self {
            HubFile::Config => 2 << 20,
            HubFile::Api => 4 << 20,
            HubFile::Index => 16 << 20,
        }
    }

    /// The file's name as sentences show it.
    pub const fn label(self) -> &'static str {
        match self {
            HubFile::Config => "config.json",
            HubFile::Api => "api/models",
            HubFile::Index => "model.safetensors.index.json",
        }
    }
}

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

/// What went wrong fetching from the Hub; each has one sentence in either language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubError {
    /// Not a model id.
    BadId {
        /// What was typed (shortened).
        given: String,
    },
    /// A link to a site other than huggingface.co.
    OtherHost {
        /// What was typed (shortened).
        given: String,
    },
    /// `HF_ENDPOINT` is not an http(s) address.
    BadEndpoint {
        /// Its value (shortened).
        given: String,
    },
    /// 401 or 403: a gated or private model.
    Gated {
        /// The model.
        id: String,
    },
    /// 404: no such model (or no such file).
    Missing {
        /// The model.
        id: String,
        /// The file asked for.
        file: HubFile,
    },
    /// Any other HTTP status.
    Status {
        /// The file asked for.
        file: HubFile,
        /// The status code.
        code: u16,
    },
    /// The Hub could not be reached (offline, DNS, refused, blocked).
    Offline {
        /// The client's reason, as it gave it (may be empty).
        detail: String,
    },
    /// No answer within the time limit.
    Timeout {
        /// The limit, seconds.
        seconds: u64,
    },
    /// The answer is larger than [`HubFile::limit_bytes`].
    TooLarge {
        /// The file asked for.
        file: HubFile,
        /// The limit, bytes.
        limit_bytes: usize,
    },
    /// The answer is not what the file should be (not JSON, not a config).
    Malformed {
        /// The file asked for.
        file: HubFile,
        /// Why: the parser's sentence, or what the answer is instead.
        detail: Phrase,
    },
}

impl HubError {
    /// The sentence, as a phrase of the translation table.
    pub fn phrase(&self) -> Phrase {
        match self {
            HubError::BadId { given } => Phrase::tr("phr_hub_bad_id").val("given", given),
            HubError::OtherHost { given } => Phrase::tr("phr_hub_other_host").val("given", given),
            HubError::BadEndpoint { given } => {
                Phrase::tr("phr_hub_bad_endpoint").val("given", given)
            }
            HubError::Gated { id } => Phrase::tr("phr_hub_gated").val("id", id),
            HubError::Missing { id, file } => Phrase::tr("phr_hub_missing")
                .val("id", id)
                .val("file", file.label()),
            HubError::Status { file, code } => Phrase::tr("phr_hub_status")
                .val("file", file.label())
                .val("code", code),
            HubError::Offline { detail } => {
                let d = if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", shorten(detail))
                };
                Phrase::tr("phr_hub_offline").val("detail", d)
            }
            HubError::Timeout { seconds } => Phrase::tr("phr_hub_timeout").val("s", seconds),
            HubError::TooLarge { file, limit_bytes } => Phrase::tr("phr_hub_too_large")
                .val("file", file.label())
                .val(
                    "limit",
                    crate::core::base::derivation::group(*limit_bytes as u64),
                ),
            HubError::Malformed { file, detail } => Phrase::tr("phr_hub_malformed")
                .val("file", file.label())
                .sub("detail", detail.clone()),
        }
    }

    /// The sentence in `lang`.
    pub fn message(&self, lang: Lang) -> String {
        self.phrase().text(lang)
    }

    /// A stable name for scripts (the CLI's JSON `hub_error_kind`, the page's `data-kind`).
    pub const fn kind(&self) -> &'static str {
        match self {
            HubError::BadId { .. } | HubError::OtherHost { .. } => "bad_id",
            HubError::BadEndpoint { .. } => "bad_endpoint",
            HubError::Gated { .. } => "gated",
            HubError::Missing { .. } => "missing",
            HubError::Status { .. } => "status",
            HubError::Offline { .. } => "offline",
            HubError::Timeout { .. } => "timeout",
            HubError::TooLarge { .. } => "too_large",
            HubError::Malformed { .. } => "malformed",
        }
    }
}

impl fmt::Display for HubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(Lang::En))
    }
}

impl std::error::Error for HubError {}

/// Reads an answer's status and size: 2xx and within the limit gives the body; 401/403 is
/// [`HubError::Gated`], 404 [`HubError::Missing`], anything else [`HubError::Status`].
pub fn check_answer<'a>(
    id: &ModelId,
    file: HubFile,
    status: u16,
    body: &'a str,
) -> Result<&'a str, HubError> {
    match status {
        200..=299 if body.len() > file.limit_bytes() => Err(HubError::TooLarge {
            file,
            limit_bytes: file.limit_bytes(),
        }),
        200..=299 => Ok(body),
        401 | 403 => Err(HubError::Gated { id: id.to_string() }),
        404 => Err(HubError::Missing {
            id: id.to_string(),
            file,
        }),
        code => Err(HubError::Status { file, code }),
    }
}

/// The JSON of an answer, or [`HubError::Malformed`] with the parser's sentence.
fn json_of(file: HubFile, body: &str) -> Result<Value, HubError> {
    crate::core::base::json::parse(body).map_err(|e| HubError::Malformed {
        file,
        detail: Phrase::error(e),
    })
}

/// `config.json`'s answer as a model (read by [`parse_model_text`], as a pasted config is).
/// Text that is not JSON, or JSON that is not a config (an index, an HTML page, an error
/// object), is [`HubError::Malformed`] with the reason.
pub fn read_config(id: &ModelId, status: u16, body: &str) -> Result<ModelDesc, HubError> {
    let body = check_answer(id, HubFile::Config, status, body)?;
    let malformed = |detail: Phrase| HubError::Malformed {
        file: HubFile::Config,
        detail,
    };
    json_of(HubFile::Config, body)?;
    let m = parse_model_text(body).map_err(|e: CalcError| malformed(Phrase::error(e)))?;
    if m.origin != ModelOrigin::Config {
        return Err(malformed(Phrase::tr("phr_hub_not_a_config")));
    }
    Ok(m)
}

/// Where the Hub's parameter count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CountSource {
    /// The model API's `safetensors` (the Hub's own count of stored elements).
    Api,
    /// The index's `metadata.total_parameters`.
    IndexParameters,
    /// The index's `metadata.total_size` ÷ bytes per parameter: an estimate.
    IndexBytes,
}

/// The Hub's count of a checkpoint's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HubCount {
    /// Parameters (stored elements), all dtypes.
    pub total: u64,
    /// Per safetensors dtype (`BF16`, `F32`, `I32`, …), as the API gives them.
    pub by_dtype: Vec<(String, u64)>,
    /// Where the figure comes from.
    pub source: CountSource,
    /// For [`CountSource::IndexBytes`]: the index's `total_size` (bytes) and the dtype used.
    pub from_bytes: Option<(u64, Dtype)>,
}

/// The model API's answer: its `safetensors` count, or `None` when it has none (a checkpoint
/// without safetensors files, or one the Hub has not counted). Errors as [`check_answer`];
/// a `safetensors` that is not `{parameters: {DTYPE: n}, total: n}` is malformed.
pub fn read_api(id: &ModelId, status: u16, body: &str) -> Result<Option<HubCount>, HubError> {
    let body = check_answer(id, HubFile::Api, status, body)?;
    let v = json_of(HubFile::Api, body)?;
    if !v.is_object() {
        return Err(HubError::Malformed {
            file: HubFile::Api,
            detail: Phrase::tr("phr_hub_not_model_info"),
        });
    }
    let Some(st) = v.get("safetensors").filter(|s| !s.is_null()) else {
        return Ok(None);
    };
    let bad = || HubError::Malformed {
        file: HubFile::Api,
        detail: Phrase::tr("phr_hub_bad_safetensors"),
    };
    let mut by_dtype = Vec::new();
    let mut sum: u64 = 0;
    if let Some(p) = st.get("parameters") {
        for (k, n) in p.as_object().ok_or_else(bad)? {
            let n = n.as_u64().ok_or_else(bad)?;
            sum = sum.checked_add(n).ok_or_else(bad)?;
            by_dtype.push((shorten(k), n));
        }
    }
    let total = match st.get("total") {
        Some(t) => t.as_u64().ok_or_else(bad)?,
        None if !by_dtype.is_empty() => sum,
        None => return Err(bad()),
    };
    Ok(Some(HubCount {
        total,
        by_dtype,
        source: CountSource::Api,
        from_bytes: None,
    }))
}

/// The index's answer: `None` when the checkpoint has none (404: a single-file checkpoint);
/// else its `metadata.total_parameters`, or its `metadata.total_size` divided by the bytes per
/// parameter of `dtype` (the config's `torch_dtype`), an estimate.
pub fn read_index(
    id: &ModelId,
    status: u16,
    body: &str,
    dtype: Dtype,
) -> Result<Option<HubCount>, HubError> {
    if status == 404 {
        return Ok(None);
    }
    let body = check_answer(id, HubFile::Index, status, body)?;
    let v = json_of(HubFile::Index, body)?;
    let meta = v.get("metadata");
    let bad = || HubError::Malformed {
        file: HubFile::Index,
        detail: Phrase::tr("phr_hub_bad_index"),
    };
    if let Some(n) = meta.and_then(|m| m.get("total_parameters")) {
        return Ok(Some(HubCount {
            total: n.as_u64().ok_or_else(bad)?,
            by_dtype: Vec::new(),
            source: CountSource::IndexParameters,
            from_bytes: None,
        }));
    }
    let Some(size) = meta.and_then(|m| m.get("total_size")) else {
        return Err(bad());
    };
    let size = size.as_u64().ok_or_else(bad)?;
    // params = bytes × 8 ÷ bits (u128: bytes × 8 may pass 2^64; the quotient cannot).
    let total =
        u64::try_from(u128::from(size) * 8 / u128::from(dtype.bits().max(1))).map_err(|_| bad())?;
    Ok(Some(HubCount {
        total,
        by_dtype: Vec::new(),
        source: CountSource::IndexBytes,
        from_bytes: Some((size, dtype)),
    }))
}

/// Our count beside the Hub's, with the difference explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The calculator's `params_total`.
    pub ours: u64,
    /// The Hub's count.
    pub hub: u64,
    /// `hub − ours` (parameters; negative when the checkpoint stores fewer).
    pub difference: i128,
    /// The sentences that explain the difference (and how the Hub's figure was found).
    pub explanation: Vec<Phrase>,
}

/// Sets the Hub's count beside the calculator's and explains the difference.
pub fn compare(m: &ModelDesc, hub: &HubCount) -> Comparison {
    let ours = m.params.total;
    let difference = i128::from(hub.total) - i128::from(ours);
    let diff = crate::core::base::derivation::group(difference.unsigned_abs() as u64);
    let pct = if ours > 0 {
        format!(
            "{}%",
            fmt_sig(difference.unsigned_abs() as f64 / ours as f64 * 100.0)
        )
    } else {
        "—".to_string()
    };
    let quantized = m.weights.method != "none" && m.weights.dtype.bits() < 8;
    let mut explanation = vec![match difference.signum() {
        0 => Phrase::tr("phr_hub_same"),
        1 => Phrase::tr("phr_hub_more")
            .val("diff", &diff)
            .val("pct", &pct),
        _ if quantized => Phrase::tr("phr_hub_fewer_packed")
            .val("diff", &diff)
            .val("pct", &pct)
            .val("method", &m.weights.method),
        _ => Phrase::tr("phr_hub_fewer")
            .val("diff", &diff)
            .val("pct", &pct),
    }];
    match (hub.source, hub.from_bytes) {
        (CountSource::IndexBytes, Some((size, dtype))) => explanation.push(
            Phrase::tr("phr_hub_estimated")
                .val("bytes", crate::core::base::derivation::group(size))
                .val("bits", dtype.bits())
                .val("dtype", dtype.id()),
        ),
        (CountSource::IndexParameters, _) => {
            explanation.push(Phrase::tr("phr_hub_from_index_params"));
        }
        _ => {}
    }
    Comparison {
        ours,
        hub: hub.total,
        difference,
        explanation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(s: &str) -> ModelId {
        ModelId::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn fixture(name: &str) -> String {
        let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    #[test]
    fn model_ids_follow_the_hubs_rules() {
        for ok in [
            "meta-llama/Llama-2-7b-hf",
            "Qwen/Qwen2.5-7B-Instruct",
            "a/b",
            "org_1/x.y_z-2",
            " google/gemma-3-4b-it ",
            "https://huggingface.co/Qwen/Qwen3-8B",
            "https://huggingface.co/Qwen/Qwen3-8B/",
            "huggingface.co/Qwen/Qwen3-8B",
        ] {
            let m = id(ok);
            let text = m.to_string();
            assert_eq!(text.matches('/').count(), 1, "{ok}");
            assert!(ok.contains(&text), "{ok} → {text}");
        }
        let long = "a".repeat(NAME_MAX + 1);
        for bad in [
            "",
            "gpt2",
            "/name",
            "org/",
            "../etc/passwd",
            "org/..",
            "org/a..b",
            "org/a--b",
            "-org/name",
            "org/name.",
            "org/name.git",
            "org/name/tree/main",
            "org/na me",
            "org/name?x=1",
            "org/name#x",
            "org/%2e%2e",
            "org\\name",
            "조직/모델",
            &format!("org/{long}"),
        ] {
            assert_eq!(
                ModelId::parse(bad).map_err(|e| e.kind()),
                Err("bad_id"),
                "{bad}"
            );
        }
        for other in [
            "https://evil.example/org/name",
            "http://127.0.0.1:9/org/name",
            "//evil.example/org/name",
            "https://hf.co/org/name",
            "www.example.com/a",
        ] {
            assert!(
                matches!(ModelId::parse(other), Err(HubError::OtherHost { .. })),
                "{other}"
            );
        }
        assert_eq!(
            id(&format!("org/{}", "a".repeat(NAME_MAX))).name.len(),
            NAME_MAX
        );
    }

    #[test]
    fn urls_follow_the_hubs_layout() {
        let m = id("meta-llama/Llama-2-7b-hf");
        let expect = [
            (HubFile::Config, "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json"),
            (HubFile::Index, "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/model.safetensors.index.json"),
            (HubFile::Api, "https://huggingface.co/api/models/meta-llama/Llama-2-7b-hf"),
        ];
        for (f, url) in expect {
            assert_eq!(f.url(HUB_ORIGIN, &m), url);
            // A stub's base with or without a trailing slash gives the same path.
            let stub = f.url("http://127.0.0.1:8080/", &m);
            assert_eq!(
                stub.strip_prefix("http://127.0.0.1:8080"),
                url.strip_prefix(HUB_ORIGIN)
            );
        }
    }

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

    #[test]
    fn statuses_become_sentences() {
        let m = id("org/name");
        for f in [HubFile::Config, HubFile::Api, HubFile::Index] {
            assert_eq!(check_answer(&m, f, 200, "{}"), Ok("{}"));
            assert_eq!(
                check_answer(&m, f, 401, "").map_err(|e| e.kind()),
                Err("gated")
            );
            assert_eq!(
                check_answer(&m, f, 403, "").map_err(|e| e.kind()),
                Err("gated")
            );
            assert_eq!(
                check_answer(&m, f, 404, "").map_err(|e| e.kind()),
                Err("missing")
            );
            assert_eq!(
                check_answer(&m, f, 500, "").map_err(|e| e.kind()),
                Err("status")
            );
            let big = " ".repeat(f.limit_bytes() + 1);
            assert_eq!(
                check_answer(&m, f, 200, &big).map_err(|e| e.kind()),
                Err("too_large")
            );
            assert!(check_answer(&m, f, 200, &big[1..]).is_ok());
        }
        let gated = HubError::Gated { id: m.to_string() };
        assert!(gated.message(Lang::En).contains("Accept the licence"));
        assert!(gated.message(Lang::En).contains("org/name"));
        assert!(gated.message(Lang::Ko).contains("라이선스"));
    }

    #[test]
    fn every_error_has_both_sentences_filled() {
        let errors = [
            HubError::BadId { given: "x".into() },
            HubError::OtherHost { given: "x".into() },
            HubError::BadEndpoint { given: "x".into() },
            HubError::Gated { id: "o/n".into() },
            HubError::Missing {
                id: "o/n".into(),
                file: HubFile::Config,
            },
            HubError::Status {
                file: HubFile::Api,
                code: 503,
            },
            HubError::Offline {
                detail: "dns".into(),
            },
            HubError::Offline {
                detail: String::new(),
            },
            HubError::Timeout { seconds: 20 },
            HubError::TooLarge {
                file: HubFile::Index,
                limit_bytes: 16 << 20,
            },
            HubError::Malformed {
                file: HubFile::Config,
                detail: Phrase::tr("phr_hub_not_a_config"),
            },
        ];
        for e in &errors {
            for lang in Lang::ALL {
                let t = e.message(*lang);
                assert!(!t.contains('{') && !t.contains("⟨missing"), "{e:?}: {t}");
            }
            assert_ne!(e.message(Lang::En), e.message(Lang::Ko), "{e:?}");
        }
    }

    #[test]
    fn config_answers() {
        let m = id("meta-llama/Llama-2-7b-hf");
        let text = fixture("meta-llama__Llama-2-7b-hf.json");
        let want = parse_model_text(&text).ok().map(|d| d.params.total);
        assert!(want.is_some());
        assert_eq!(
            read_config(&m, 200, &text).ok().map(|d| d.params.total),
            want
        );
        let kind = |status: u16, body: &str| {
            read_config(&m, status, body)
                .map(|_| ())
                .map_err(|e| e.kind())
        };
        assert_eq!(kind(401, "Access to model is restricted"), Err("gated"));
        assert_eq!(kind(404, "Entry not found"), Err("missing"));
        assert_eq!(kind(200, "<!doctype html><p>hi"), Err("malformed"));
        assert_eq!(kind(200, "[1, 2]"), Err("malformed"));
        // An index where a config should be: JSON, but not a config.
        let e = read_config(
            &m,
            200,
            r#"{"metadata": {"total_size": 26953662464}, "weight_map": {}}"#,
        );
        assert!(
            matches!(&e, Err(HubError::Malformed { detail, .. }) if *detail == Phrase::tr("phr_hub_not_a_config")),
            "{e:?}"
        );
        // The parser's own sentence is kept (a config that lacks a key it needs: a family
        // with no transformers class, so no class default fills it).
        let e = read_config(&m, 200, r#"{"model_type": "no_such_family"}"#)
            .map_err(|e| e.message(Lang::En));
        assert!(
            e.as_ref()
                .is_err_and(|t| t.contains("config.json") && t.len() > 40),
            "{e:?}"
        );
    }

    #[test]
    fn api_answers() {
        let m = id("o/n");
        let (a, b) = (6_476_005_376u64, 262_410_240u64);
        let body = format!(
            r#"{{"id": "o/n", "safetensors": {{"parameters": {{"BF16": {a}, "F32": {b}}}, "total": {}}}}}"#,
            a + b
        );
        let c = read_api(&m, 200, &body);
        assert_eq!(
            c.as_ref().map(|c| c.as_ref().map(|c| c.total)),
            Ok(Some(a + b))
        );
        assert_eq!(
            c.map(|c| c.map(|c| c.by_dtype)),
            Ok(Some(vec![("BF16".to_string(), a), ("F32".to_string(), b)]))
        );
        // No `total`: the sum of the dtypes.
        let body = format!(r#"{{"safetensors": {{"parameters": {{"BF16": {a}, "F32": {b}}}}}}}"#);
        assert_eq!(
            read_api(&m, 200, &body).map(|c| c.map(|c| c.total)),
            Ok(Some(a + b))
        );
        assert_eq!(read_api(&m, 200, r#"{"id": "o/n"}"#), Ok(None));
        assert_eq!(read_api(&m, 200, r#"{"safetensors": null}"#), Ok(None));
        for bad in [
            "not json",
            "[]",
            r#"{"safetensors": {"parameters": {"BF16": -1}}}"#,
            r#"{"safetensors": {"parameters": []}}"#,
            r#"{"safetensors": {}}"#,
            r#"{"safetensors": {"total": "7B"}}"#,
            r#"{"safetensors": {"parameters": {"A": 18446744073709551615, "B": 1}}}"#,
        ] {
            assert_eq!(
                read_api(&m, 200, bad).map_err(|e| e.kind()),
                Err("malformed"),
                "{bad}"
            );
        }
        assert_eq!(read_api(&m, 401, "").map_err(|e| e.kind()), Err("gated"));
    }

    #[test]
    fn index_answers_and_the_estimate() {
        let m = id("o/n");
        let n = 6_738_415_616u64;
        // total_size in fp16 is 2 bytes per parameter: the estimate gives n back.
        let body = format!(
            r#"{{"metadata": {{"total_size": {}}}, "weight_map": {{}}}}"#,
            n * 2
        );
        let c = read_index(&m, 200, &body, Dtype::Fp16);
        assert_eq!(
            c.as_ref().map(|c| c.as_ref().map(|c| (c.total, c.source))),
            Ok(Some((n, CountSource::IndexBytes)))
        );
        // The same bytes read as fp32 give half as many parameters.
        assert_eq!(
            read_index(&m, 200, &body, Dtype::Fp32).map(|c| c.map(|c| c.total)),
            Ok(Some(n / 2))
        );
        let body = format!(r#"{{"metadata": {{"total_parameters": {n}, "total_size": 1}}}}"#);
        assert_eq!(
            read_index(&m, 200, &body, Dtype::Bf16).map(|c| c.map(|c| (c.total, c.source))),
            Ok(Some((n, CountSource::IndexParameters)))
        );
        assert_eq!(
            read_index(&m, 404, "Entry not found", Dtype::Bf16),
            Ok(None)
        );
        assert_eq!(
            read_index(&m, 200, "{}", Dtype::Bf16).map_err(|e| e.kind()),
            Err("malformed")
        );
        assert_eq!(
            read_index(&m, 401, "", Dtype::Bf16).map_err(|e| e.kind()),
            Err("gated")
        );
        // The largest total_size does not overflow: bytes × 8 is done in 128 bits.
        let body = format!(r#"{{"metadata": {{"total_size": {}}}}}"#, u64::MAX);
        assert_eq!(
            read_index(&m, 200, &body, Dtype::Fp32).map(|c| c.map(|c| c.total)),
            Ok(Some(u64::MAX / 4))
        );
        assert_eq!(
            read_index(&m, 200, &body, Dtype::Int4).map_err(|e| e.kind()),
            Err("malformed")
        );
    }

    #[test]
    fn the_difference_is_explained() {
        let cfg = parse_model_text(&fixture("meta-llama__Llama-2-7b-hf.json"));
        let Ok(m) = cfg else { panic!("{cfg:?}") };
        let ours = m.params.total;
        let hub = |total: u64, source: CountSource| HubCount {
            total,
            by_dtype: Vec::new(),
            source,
            from_bytes: None,
        };
        let same = compare(&m, &hub(ours, CountSource::Api));
        assert_eq!((same.ours, same.hub, same.difference), (ours, ours, 0));
        assert_eq!(same.explanation, vec![Phrase::tr("phr_hub_same")]);
        // A vision tower of 400M parameters that the language model does not count.
        let tower = 400_000_000u64;
        let more = compare(&m, &hub(ours + tower, CountSource::Api));
        assert_eq!(more.difference, i128::from(tower));
        let text = more.explanation[0].text(Lang::En);
        assert!(
            text.contains(&crate::core::base::derivation::group(tower)),
            "{text}"
        );
        assert!(
            text.contains(&format!("{}%", fmt_sig(tower as f64 / ours as f64 * 100.0))),
            "{text}"
        );
        let fewer = compare(&m, &hub(ours - 1, CountSource::IndexParameters));
        assert_eq!(fewer.difference, -1);
        assert_eq!(fewer.explanation.len(), 2);
        assert!(fewer.explanation[0]
            .text(Lang::En)
            .contains("fewer parameters"));
        // An int4 checkpoint: the fewer stored elements are explained by the packing.
        let mut q = m.clone();
        q.weights.dtype = Dtype::Int4;
        q.weights.method = "gptq".into();
        let packed = compare(&q, &hub(ours / 4, CountSource::Api));
        assert!(
            packed.explanation[0].text(Lang::En).contains("gptq"),
            "{:?}",
            packed.explanation
        );
        let est = HubCount {
            from_bytes: Some((ours * 2, Dtype::Bf16)),
            ..hub(ours, CountSource::IndexBytes)
        };
        let e = compare(&m, &est);
        assert!(e.explanation[1]
            .text(Lang::En)
            .contains(&crate::core::base::derivation::group(ours * 2)));
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
