//! `llmcalc model --hf ORG/NAME`: fetches the model's `config.json`, the Hub's safetensors
//! parameter count (the model API) and, when the API has none, `model.safetensors.index.json`,
//! over HTTPS with a small blocking client (`ureq`, rustls; native only).
//!
//! Only the model id is sent (in the URL path): no token, no cookie. `HF_ENDPOINT` (the
//! variable `huggingface_hub` reads) replaces `https://huggingface.co`; the tests point it at a
//! loopback stub, so no test reaches the internet. `--hf-timeout SECONDS` (default 20) bounds
//! each request. The URLs and the reading of every answer (status, size cap, JSON, gated,
//! missing) are the core's (`core::model::hub`); this file only moves bytes.

use super::args::stdout_error;
use super::CliError;
use crate::core::base::Lang;
use crate::core::model::{
    compare_hub_count, endpoint_override, read_api, read_config, read_index, Comparison, HubCount,
    HubError, HubFile, ModelDesc, ModelId,
};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::time::Duration;

/// What `--hf` brought back.
pub struct Fetched {
    /// The model id.
    pub id: ModelId,
    /// The parsed config.
    pub model: ModelDesc,
    /// The Hub's count: `Ok(None)` when it gives none, `Err` when it could not be read (the
    /// config still was).
    pub count: Result<Option<HubCount>, HubError>,
}

/// One GET: the status and the body (read up to the file's cap, plus one byte to detect more).
fn get(
    agent: &ureq::Agent,
    url: &str,
    file: HubFile,
    timeout_s: u64,
) -> Result<(u16, String), HubError> {
    let net = |e: ureq::Error| match e {
        ureq::Error::Timeout(_) => HubError::Timeout { seconds: timeout_s },
        ureq::Error::BodyExceedsLimit(_) => HubError::TooLarge {
            file,
            limit_bytes: file.limit_bytes(),
        },
        other => HubError::Offline {
            detail: other.to_string(),
        },
    };
    let mut res = agent.get(url).call().map_err(net)?;
    let status = res.status().as_u16();
    let limit = u64::try_from(file.limit_bytes()).unwrap_or(u64::MAX);
    let bytes = res
        .body_mut()
        .with_config()
        .limit(limit.saturating_add(1))
        .read_to_vec()
        .map_err(net)?;
    if bytes.len() > file.limit_bytes() {
        return Err(HubError::TooLarge {
            file,
            limit_bytes: file.limit_bytes(),
        });
    }
    let body = String::from_utf8(bytes).map_err(|_| HubError::Malformed {
        file,
        detail: crate::core::base::Phrase::tr("phr_hub_not_text"),
    })?;
    Ok((status, body))
}

/// Fetches `--hf`'s model: config first (its failure is the command's), then the count, each
/// request within `timeout_s` seconds.
pub fn fetch(id_text: &str, timeout_s: u64) -> Result<Fetched, CliError> {
    let id = ModelId::parse(id_text)?;
    let base = endpoint_override(std::env::var("HF_ENDPOINT").ok().as_deref())?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(timeout_s)))
        .http_status_as_error(false)
        .user_agent(concat!("llmcalc/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let one = |file: HubFile| get(&agent, &file.url(&base, &id), file, timeout_s);
    let (status, body) = one(HubFile::Config)?;
    let model = read_config(&id, status, &body)?;
    let api = one(HubFile::Api).and_then(|(s, b)| read_api(&id, s, &b));
    let count = match api {
        Ok(Some(c)) => Ok(Some(c)),
        // No count from the API: the index's metadata, if the checkpoint has an index.
        other => match one(HubFile::Index)
            .and_then(|(s, b)| read_index(&id, s, &b, model.weights.base))
        {
            Ok(Some(c)) => Ok(Some(c)),
            Ok(None) => other,
            Err(e) => other.and(Err(e)),
        },
    };
    Ok(Fetched { id, model, count })
}

/// The comparison, when the Hub gave a count.
fn comparison(f: &Fetched) -> Option<(Comparison, &HubCount)> {
    match &f.count {
        Ok(Some(c)) => Some((compare_hub_count(&f.model, c), c)),
        _ => None,
    }
}

/// Why there is no Hub count, as a sentence (`None` when there is one).
fn note(f: &Fetched) -> Option<String> {
    match &f.count {
        Ok(Some(_)) => None,
        Ok(None) => Some(crate::core::base::tr(Lang::En, "phr_hub_no_count").to_string()),
        Err(e) => Some(e.to_string()),
    }
}

/// The `hub_…` keys of the JSON output (all present whenever `--hf` is given; `null` where the
/// Hub gave no count): `hub_id`, `hub_params_total`, `hub_params_source` (`api`,
/// `index_parameters`, `index_bytes`), `hub_params_by_dtype`, `hub_params_difference`
/// (hub − ours), `hub_explanation` (sentences), `hub_note` (why there is no count).
pub fn json_keys(f: &Fetched, v: &mut Map<String, Value>) {
    let cmp = comparison(f);
    let by_dtype: Map<String, Value> = cmp
        .as_ref()
        .map(|(_, c)| {
            c.by_dtype
                .iter()
                .map(|(k, n)| (k.clone(), json!(n)))
                .collect()
        })
        .unwrap_or_default();
    v.insert("hub_id".into(), json!(f.id.to_string()));
    v.insert(
        "hub_params_total".into(),
        json!(cmp.as_ref().map(|(c, _)| c.hub)),
    );
    v.insert(
        "hub_params_source".into(),
        json!(cmp.as_ref().map(|(_, c)| c.source)),
    );
    v.insert(
        "hub_params_by_dtype".into(),
        if cmp.is_some() {
            Value::Object(by_dtype)
        } else {
            Value::Null
        },
    );
    v.insert(
        "hub_params_difference".into(),
        cmp.as_ref()
            .and_then(|(c, _)| i64::try_from(c.difference).ok())
            .map_or(Value::Null, |d| json!(d)),
    );
    v.insert(
        "hub_explanation".into(),
        json!(cmp
            .as_ref()
            .map(|(c, _)| c
                .explanation
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>())
            .unwrap_or_default()),
    );
    v.insert("hub_note".into(), json!(note(f)));
}

/// The text output's lines about the Hub.
pub fn write_text(f: &Fetched, out: &mut dyn Write) -> Result<(), CliError> {
    let group = crate::core::base::group;
    match comparison(f) {
        Some((c, count)) => {
            let dtypes: Vec<String> = count
                .by_dtype
                .iter()
                .map(|(k, n)| format!("{k} {}", group(*n)))
                .collect();
            let detail = if dtypes.is_empty() {
                String::new()
            } else {
                format!(" ({})", dtypes.join(", "))
            };
            writeln!(
                out,
                "Hugging Face ({}): {} parameters{detail}; calculator: {}",
                f.id,
                group(c.hub),
                group(c.ours)
            )
            .map_err(stdout_error)?;
            for e in &c.explanation {
                writeln!(out, "  {e}").map_err(stdout_error)?;
            }
        }
        None => {
            let n = note(f).unwrap_or_default();
            writeln!(out, "Hugging Face ({}): {n}", f.id).map_err(stdout_error)?;
        }
    }
    Ok(())
}
