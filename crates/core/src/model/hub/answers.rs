//! Reading the Hub's answers: a status code and a body into a config, the model API's count or
//! the index's, or a [`HubError`].

use super::request::{HubError, HubFile, ModelId};
use crate::base::dtype::Dtype;
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::config::parse_model_text;
use crate::model::desc::{ModelDesc, ModelOrigin};
use serde::Serialize;
use serde_json::Value;

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
    crate::base::json::parse(body).map_err(|e| HubError::Malformed {
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

#[cfg(test)]
mod tests {
    use super::super::request::{HubError, HubFile};
    use super::super::test_support::{fixture, id};
    use super::*;
    use crate::base::dtype::Dtype;
    use crate::base::error::Phrase;
    use crate::base::i18n::Lang;
    use crate::model::config::parse_model_text;

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
}
