//! `llmcalc model`: parameters, weight bytes, KV cache of one sequence, recurrent state bytes
//! and the assumption ledger for a config.json / model.safetensors.index.json, or for a bare
//! parameter count (quick mode).
//!
//! ```text
//! llmcalc model --config FILE [--context L] [--kv-dtype D] [--weights-dtype D] [--tp N]
//!                [--include-mtp] [--json]
//! llmcalc model --params 7B [--weights-dtype bf16] [--json]
//! llmcalc model --hf ORG/NAME [--hf-timeout SECONDS] [--context L] … [--json]
//! ```
//! `--hf` fetches the config from huggingface.co (or `HF_ENDPOINT`) and adds the Hub's count
//! beside ours: `hub_id`, `hub_params_total`, `hub_params_source`, `hub_params_by_dtype`,
//! `hub_params_difference`, `hub_explanation`, `hub_note` (see `hub_fetch.rs`).
//! JSON fields (integers are bytes or counts): `params_total`, `params_active`, `weights_bytes`
//! (whole model), `weights_bytes_per_gpu`, `kv_bytes_per_token` (all attention layers, no
//! window), `kv_cache_bytes` (one sequence of `context` tokens, default 4096, windows applied),
//! `state_bytes` (recurrent state of one sequence, 0 without SSM layers), all per GPU under
//! `--tp`; `params_language_model`, `params_vision` (vision/audio towers), `params_mtp`
//! (multi-token-prediction modules as stored; `params_total` is the checkpoint's count, all
//! three included), `include_mtp` (whether weights count the MTP modules: vLLM skips them
//! unless speculative decoding uses them; `--include-mtp` counts them); `params` (breakdown),
//! `name`, `model_type`, `origin`, `weights_format`, `kv_dtype`, `context`, `tp`,
//! `derivations` (`weights_per_gpu` under `--tp` above 1: what is split and what every GPU
//! holds whole), `ledger`, `warnings`. Without an architecture (quick mode, a
//! safetensors index) the KV and state fields are `null`.

use super::args::{read_file, stdout_error};
use super::hub_fetch;
use super::opts::ModelArgs;
use super::{write_json, CliError};
use crate::core::base::{group, Derivation};
use crate::core::base::{Dtype, Lang};
use crate::core::calc::{
    checkpoint, default_kv_dtype, per_sequence, per_token, state_bytes, with_dtype, KvBytes,
    WeightBytes,
};
use crate::core::model::parse_model_text;
use crate::core::model::{parse_param_count, quick_model};
use crate::core::model::{ModelDesc, ModelOrigin};
use serde_json::{json, Value};
use std::io::Write;

fn dtype_opt(v: Option<&str>) -> Result<Option<Dtype>, CliError> {
    v.map(Dtype::parse).transpose().map_err(CliError::from)
}

struct Out {
    m: ModelDesc,
    w: WeightBytes,
    kv_dtype: Dtype,
    context: u64,
    tp: u64,
    kv: Option<(KvBytes, KvBytes, KvBytes)>,
    weights_dtype: Option<Dtype>,
    hub: Option<hub_fetch::Fetched>,
}

fn compute(args: &ModelArgs) -> Result<Out, CliError> {
    let (tp, context) = (args.tp, args.context);
    let wd = dtype_opt(args.dtypes.weights_dtype.as_deref())?;
    let kd = dtype_opt(args.dtypes.kv_dtype.as_deref())?;
    let (mut m, hub) = source(args, wd)?;
    m.load_mtp = args.include_mtp;
    let w = match wd {
        Some(d) => with_dtype(&m, d, tp)?,
        None => checkpoint(&m, tp)?,
    };
    let kv_dtype = kd.unwrap_or_else(|| default_kv_dtype(&m));
    let kv = if m.origin == ModelOrigin::Config {
        Some((
            per_token(&m, kv_dtype, tp)?,
            per_sequence(&m, kv_dtype, tp, context)?,
            state_bytes(&m, default_kv_dtype(&m), tp)?,
        ))
    } else {
        None
    };
    Ok(Out {
        m,
        w,
        kv_dtype,
        context,
        tp,
        kv,
        weights_dtype: wd,
        hub,
    })
}

/// The model from exactly one of `--config FILE`, `--params COUNT` or `--hf ORG/NAME`.
fn source(
    args: &ModelArgs,
    wd: Option<Dtype>,
) -> Result<(ModelDesc, Option<hub_fetch::Fetched>), CliError> {
    let given = [&args.config, &args.params, &args.hf]
        .iter()
        .filter(|k| k.is_some())
        .count();
    if given > 1 {
        return Err(CliError::Usage(
            "give one of --config FILE, --params COUNT or --hf ORG/NAME".into(),
        ));
    }
    if let Some(id) = &args.hf {
        let f = hub_fetch::fetch(id, args.hf_timeout)?;
        return Ok((f.model.clone(), Some(f)));
    }
    match &args.params {
        Some(p) => Ok((
            quick_model(parse_param_count(p)?, wd.unwrap_or(Dtype::Bf16)),
            None,
        )),
        None if args.config.is_some() => Ok((
            parse_model_text(&read_file("config", args.config.as_deref())?)?,
            None,
        )),
        None => Err(CliError::Usage(
            "--config FILE (or --params COUNT for quick mode, or --hf ORG/NAME) is required".into(),
        )),
    }
}

fn deriv(d: &Derivation) -> Value {
    serde_json::to_value(d).unwrap_or(Value::Null)
}

/// Runs `llmcalc model`.
pub fn run(args: &ModelArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let o = compute(args)?;
    let m = &o.m;
    if args.json {
        let (tok, seq, st) = match &o.kv {
            Some((t, s, st)) => (json!(t.bytes.0), json!(s.bytes.0), json!(st.bytes.0)),
            None => (Value::Null, Value::Null, Value::Null),
        };
        let mut derivs = serde_json::Map::new();
        derivs.insert("weights".into(), deriv(&o.w.derivation));
        if o.tp > 1 {
            derivs.insert("weights_per_gpu".into(), deriv(&o.w.per_gpu_derivation));
        }
        if let Some((t, s, st)) = &o.kv {
            derivs.insert("kv_per_token".into(), deriv(&t.derivation));
            derivs.insert("kv_cache".into(), deriv(&s.derivation));
            derivs.insert("state".into(), deriv(&st.derivation));
        }
        let mut v = json!({
            "name": m.name,
            "model_type": m.model_type,
            "origin": m.origin,
            "params_total": m.params.total,
            "params_active": m.params.active,
            "params_language_model": m.params.language_model,
            "params_vision": m.params.vision,
            "params_mtp": m.params.mtp,
            "include_mtp": m.load_mtp,
            "params": m.params,
            "weights_bytes": o.w.total.0,
            "weights_bytes_per_gpu": o.w.per_gpu.0,
            "weights_format": m.weights,
            "weights_dtype": o.weights_dtype.map_or_else(|| "checkpoint".to_string(), |d| d.id().to_string()),
            "tp": o.tp,
            "context": o.context,
            "kv_dtype": o.kv_dtype,
            "kv_bytes_per_token": tok,
            "kv_cache_bytes": seq,
            "state_bytes": st,
            "derivations": derivs,
            "ledger": m.ledger,
            "warnings": m.warnings,
        });
        if let (Some(f), Some(map)) = (&o.hub, v.as_object_mut()) {
            hub_fetch::json_keys(f, map);
        }
        return write_json(out, &v);
    }
    writeln!(out, "{} ({})", m.name, m.model_type).map_err(stdout_error)?;
    writeln!(
        out,
        "parameters: {} total, {} active per token",
        group(m.params.total),
        group(m.params.active)
    )
    .map_err(stdout_error)?;
    for line in m.param_parts() {
        writeln!(out, "  {}", line.text(Lang::En)).map_err(stdout_error)?;
    }
    if let Some(f) = &o.hub {
        hub_fetch::write_text(f, out)?;
    }
    let d = &o.w.derivation;
    writeln!(
        out,
        "weights: {} = {} → {}",
        d.formula, d.substituted, d.result
    )
    .map_err(stdout_error)?;
    if o.tp > 1 {
        writeln!(
            out,
            "weights per GPU (tp {}): {} B = {}",
            o.tp,
            group(o.w.per_gpu.0),
            o.w.per_gpu.fmt_gib()
        )
        .map_err(stdout_error)?;
    }
    match &o.kv {
        Some((t, s, st)) => {
            writeln!(
                out,
                "KV per token ({}): {} = {} → {}",
                o.kv_dtype, t.derivation.formula, t.derivation.substituted, t.derivation.result
            )
            .map_err(stdout_error)?;
            writeln!(
                out,
                "KV for {} tokens: {} → {}",
                o.context, s.derivation.substituted, s.derivation.result
            )
            .map_err(stdout_error)?;
            writeln!(
                out,
                "recurrent state per sequence: {}",
                st.derivation.result
            )
            .map_err(stdout_error)?;
        }
        None => writeln!(out, "KV cache: needs a config.json (no architecture given)")
            .map_err(stdout_error)?,
    }
    for w in &m.warnings {
        writeln!(out, "warning: {w}").map_err(stdout_error)?;
    }
    writeln!(out, "ledger:").map_err(stdout_error)?;
    for l in &m.ledger {
        let src = match &l.source {
            crate::core::model::LedgerSource::Key(k) => format!("key {k}"),
            crate::core::model::LedgerSource::Default(w) => format!("default: {w}"),
            crate::core::model::LedgerSource::Derived(w) => format!("derived: {w}"),
            crate::core::model::LedgerSource::ClassDefault(w) => format!("class default: {w}"),
        };
        writeln!(out, "  {} = {} ({src})", l.field, l.value).map_err(stdout_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(a: &[&str]) -> (i32, String, String) {
        let args: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = crate::run(&args, &mut out, &mut err);
        (
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    }

    fn fixture(name: &str) -> String {
        format!(
            "{}/tests/fixtures/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
        )
    }

    #[test]
    fn llama2_json() {
        let (code, out, err) = run_args(&[
            "model",
            "--config",
            &fixture("meta-llama__Llama-2-7b-hf.json"),
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        assert_eq!(v["params_total"], json!(6_738_415_616u64));
        // fp16 checkpoint: 2 B per parameter.
        assert_eq!(v["weights_bytes"], json!(6_738_415_616u64 * 2));
        // 2 × 32 × 32 × 128 × 2 B per token; × 4096 tokens by default.
        assert_eq!(v["kv_bytes_per_token"], json!(2 * 32 * 32 * 128 * 2u64));
        assert_eq!(v["kv_cache_bytes"], json!(2 * 32 * 32 * 128 * 2 * 4096u64));
        assert_eq!(v["state_bytes"], json!(0));
        assert!(v["ledger"].as_array().is_some_and(|l| !l.is_empty()));
    }

    #[test]
    fn quick_mode_and_text() {
        let (code, out, _) = run_args(&[
            "model",
            "--params",
            "7B",
            "--weights-dtype",
            "bf16",
            "--json",
        ]);
        assert_eq!(code, 0);
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        assert_eq!(v["weights_bytes"], json!(14_000_000_000u64));
        assert_eq!(v["kv_cache_bytes"], Value::Null);
        let (code, out, _) = run_args(&[
            "model",
            "--config",
            &fixture("openai__gpt-oss-20b.json"),
            "--tp",
            "2",
        ]);
        assert_eq!(code, 0);
        assert!(out.contains("KV per token"));
    }

    #[test]
    fn bad_input_exits_2() {
        for a in [
            vec!["model"],
            vec!["model", "--config", "/nonexistent/file.json"],
            vec!["model", "--params", "seven"],
            vec!["model", "--params", "7B", "--weights-dtype", "fp7"],
            vec!["model", "--config", "/dev/null"],
            vec!["model", "--params", "7B", "--tp", "0"],
            // Refused before any request is made: two sources, a bad id, a bad timeout.
            vec!["model", "--hf", "org/name", "--params", "7B"],
            vec!["model", "--hf", "../../etc/passwd"],
            vec!["model", "--hf", "org/name", "--hf-timeout", "0"],
        ] {
            let (code, out, err) = run_args(&a);
            assert_eq!(code, 2, "{a:?}");
            assert!(out.is_empty() && err.lines().count() == 1, "{a:?}: {err}");
        }
        // TP that does not divide the heads (Llama-2-7b has 32).
        let (code, _, err) = run_args(&[
            "model",
            "--config",
            &fixture("meta-llama__Llama-2-7b-hf.json"),
            "--tp",
            "3",
        ]);
        assert_eq!(code, 2);
        assert!(err.contains("does not divide"), "{err}");
    }
}
