//! The checkpoint's storage format from `torch_dtype` and `quantization_config`.
//!
//! | quant_method | elements | scales |
//! |---|---|---|
//! | none | `torch_dtype` | — |
//! | `fp8` | 1 B | fp32 per `weight_block_size` block (e.g. 128×128), else per tensor |
//! | `awq` | `bits` (4) | fp16 scale + packed `bits` zero point per `group_size` (128) |
//! | `gptq` | `bits` (4) | fp16 scale + packed `bits` zero point per `group_size` (128; −1 = per channel) |
//! | `bitsandbytes` 4-bit | 4 bits (nf4) | fp32 absmax per 64 (8-bit with double quantization) |
//! | `bitsandbytes` 8-bit | 1 B | per-row fp32 scale (noted, not counted) |
//! | `mxfp4` | 4 bits | e8m0 (8-bit) scale per 32; gpt-oss: routed experts only |
//! | `compressed-tensors` | `num_bits` of `type` | per `group_size`; `nvfp4-pack-quantized`: fp8 per 16 |
//!
//! Quantized methods apply to the linear weight matrices of the decoder layers; embeddings,
//! lm_head, norms, biases and routers stay in `torch_dtype`.

use super::reader::Reader;
use crate::base::dtype::Dtype;
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::{LedgerSource, WeightFormat};
use serde_json::{Map, Value};

fn num(v: Option<&Value>) -> Option<i64> {
    v.and_then(|x| {
        x.as_i64().or_else(|| {
            x.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e12)
                .map(|f| f as i64)
        })
    })
}

/// The storage precision for `bits`-wide elements. Widths between the modelled ones are
/// rounded up (2- and 3-bit → 4-bit, 5- to 7-bit → 8-bit) with a warning: an upper bound.
fn bits_dtype(r: &mut Reader, bits: i64, float: bool, key: &str) -> Result<Dtype, CalcError> {
    if (1..=7).contains(&bits) && bits != 4 {
        r.warnings.push(
            Phrase::tr("wrn_bits_not_modelled")
                .val("key", key)
                .val("bits", bits)
                .val("as", if bits < 4 { 4 } else { 8 }),
        );
    }
    Ok(match (bits, float) {
        (5..=8, true) => Dtype::Fp8,
        (5..=8, false) => Dtype::Int8,
        (1..=4, true) => Dtype::Fp4,
        (1..=4, false) => Dtype::Int4,
        (16, _) => Dtype::Bf16,
        _ => {
            return Err(CalcError::BadValue {
                key: key.to_string(),
                found: Phrase::verbatim(bits.to_string()),
                expected: Phrase::tr("exp_quant_bits"),
            })
        }
    })
}

fn group(g: Option<i64>, default: u64) -> Option<u64> {
    match g {
        Some(x) if x > 0 => Some(x as u64),
        Some(_) => None, // −1: per output channel (scale bytes negligible)
        None => Some(default),
    }
}

/// `fp8`: 1-byte elements, an fp32 scale per `weight_block_size` block when it has two
/// positive sides.
fn fp8(q: &Map<String, Value>, f: &mut WeightFormat) {
    f.dtype = Dtype::Fp8;
    if let Some(Value::Array(b)) = q.get("weight_block_size") {
        let dims: Vec<i64> = b
            .iter()
            .filter_map(|x| num(Some(x)))
            .filter(|x| *x > 0)
            .collect();
        let prod = dims.iter().try_fold(1u64, |a, &x| a.checked_mul(x as u64));
        if let (2, Some(p)) = (dims.len(), prod) {
            f.group_size = Some(p);
            f.scale_bits = 32;
        }
    }
}

/// `awq` / `gptq`: `bits`-wide integers, an fp16 scale and a zero point per `group_size`.
fn awq_gptq(
    r: &mut Reader,
    q: &Map<String, Value>,
    method: &str,
    f: &mut WeightFormat,
) -> Result<(), CalcError> {
    let bits = num(q.get("bits").or_else(|| q.get("w_bit"))).unwrap_or(4);
    f.dtype = bits_dtype(r, bits, false, "quantization_config.bits")?;
    f.group_size = group(
        num(q.get("group_size").or_else(|| q.get("q_group_size"))),
        128,
    );
    f.scale_bits = 16;
    f.zero_point = if method == "awq" {
        q.get("zero_point").and_then(Value::as_bool).unwrap_or(true)
    } else {
        true
    };
    Ok(())
}

/// `bitsandbytes`: nf4 with an absmax per 64 (8-bit when double-quantized), else int8.
fn bitsandbytes(q: &Map<String, Value>, f: &mut WeightFormat) {
    if q.get("load_in_4bit").and_then(Value::as_bool) == Some(true) {
        f.dtype = Dtype::Int4;
        f.group_size = Some(64);
        f.scale_bits = if q.get("bnb_4bit_use_double_quant").and_then(Value::as_bool) == Some(true)
        {
            8
        } else {
            32
        };
    } else {
        f.dtype = Dtype::Int8;
    }
}

/// `mxfp4`: fp4 with an 8-bit scale per 32; routed experts only for gpt-oss or when the
/// attention is left unconverted.
fn mxfp4(q: &Map<String, Value>, fam: &str, f: &mut WeightFormat) {
    f.dtype = Dtype::Fp4;
    f.group_size = Some(32);
    f.scale_bits = 8;
    let not_conv = q
        .get("modules_to_not_convert")
        .map(|v| v.to_string())
        .unwrap_or_default();
    f.experts_only = fam == "gpt_oss" || not_conv.contains("self_attn");
}

/// `compressed-tensors`: the first config group's weights (`num_bits`, `type`, `group_size`,
/// `symmetric`); `nvfp4` formats are fp4 with an fp8 scale per 16.
fn compressed_tensors(
    r: &mut Reader,
    q: &Map<String, Value>,
    f: &mut WeightFormat,
) -> Result<(), CalcError> {
    let fmt = q.get("format").and_then(Value::as_str).unwrap_or("");
    let w = q
        .get("config_groups")
        .and_then(Value::as_object)
        .and_then(|g| g.values().next())
        .and_then(|g| g.get("weights"));
    let bits = num(w.and_then(|w| w.get("num_bits"))).unwrap_or(8);
    let float = w.and_then(|w| w.get("type")).and_then(Value::as_str) == Some("float");
    f.dtype = bits_dtype(
        r,
        bits,
        float,
        "quantization_config.config_groups.weights.num_bits",
    )?;
    if fmt.contains("nvfp4") {
        f.dtype = Dtype::Fp4;
        f.group_size = Some(16);
        f.scale_bits = 8;
    } else {
        f.group_size = num(w.and_then(|w| w.get("group_size")))
            .filter(|g| *g > 0)
            .map(|g| g as u64);
        f.scale_bits = if f.group_size.is_some() { 16 } else { 0 };
        f.zero_point = w.and_then(|w| w.get("symmetric")).and_then(Value::as_bool) == Some(false);
    }
    Ok(())
}

/// `modelopt`: `quant_algo` NVFP4 (fp4, fp8 scale per 16) or FP8.
fn modelopt(q: &Map<String, Value>, f: &mut WeightFormat) {
    let algo = q
        .get("quant_algo")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_uppercase();
    if algo.contains("NVFP4") {
        f.dtype = Dtype::Fp4;
        f.group_size = Some(16);
        f.scale_bits = 8;
    } else if algo.contains("FP8") {
        f.dtype = Dtype::Fp8;
    }
}

/// Reads `quantization_config` (top level) into a [`WeightFormat`] over `base`.
pub fn weight_format_from(
    r: &mut Reader,
    base: Dtype,
    fam: &str,
) -> Result<WeightFormat, CalcError> {
    let q = r
        .root()
        .get("quantization_config")
        .or_else(|| r.find("quantization_config").map(|(_, v)| v));
    let Some(Value::Object(q)) = q else {
        return Ok(WeightFormat::plain(base));
    };
    let method = q
        .get("quant_method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut f = WeightFormat::plain(base);
    f.method = method.clone();
    match method.as_str() {
        "fp8" => fp8(q, &mut f),
        "awq" | "gptq" => awq_gptq(r, q, &method, &mut f)?,
        "bitsandbytes" => bitsandbytes(q, &mut f),
        "mxfp4" => mxfp4(q, fam, &mut f),
        "compressed-tensors" | "compressed_tensors" => compressed_tensors(r, q, &mut f)?,
        "modelopt" => modelopt(q, &mut f),
        other => {
            r.warnings
                .push(Phrase::tr("wrn_quant_method").val("m", shorten(other)));
            f.method = "unknown".into();
            return Ok(f);
        }
    }
    // In symbols, the same in both UI languages: "mxfp4 fp4 + 8 b / 32 (MoE)" is 4-bit weights
    // with an 8-bit scale per group of 32, on the routed experts only.
    let desc = format!(
        "{} {}{}{}",
        f.method,
        f.dtype,
        f.group_size
            .map(|g| format!(" + {} b / {g}", f.scale_bits))
            .unwrap_or_default(),
        if f.experts_only { " (MoE)" } else { "" }
    );
    r.note(
        "weight_format",
        desc,
        LedgerSource::Key("quantization_config".into()),
    );
    Ok(f)
}

#[cfg(test)]
mod tests {
    use crate::base::dtype::Dtype;
    use crate::model::config::parse_model_text;
    use crate::model::desc::WeightFormat;

    fn fmt_of(q: &str) -> Option<WeightFormat> {
        let text = format!(
            r#"{{"model_type":"llama","hidden_size":256,"intermediate_size":512,"num_hidden_layers":2,
            "num_attention_heads":4,"vocab_size":100,"torch_dtype":"float16","quantization_config":{q}}}"#
        );
        parse_model_text(&text).ok().map(|m| m.weights)
    }

    #[test]
    fn methods() {
        let f = fmt_of(r#"{"quant_method":"awq","bits":4,"group_size":128,"zero_point":true}"#);
        assert_eq!(
            f.as_ref()
                .map(|f| (f.dtype, f.group_size, f.scale_bits, f.zero_point)),
            Some((Dtype::Int4, Some(128), 16, true))
        );
        let f = fmt_of(r#"{"quant_method":"gptq","bits":8,"group_size":-1}"#);
        assert_eq!(
            f.as_ref().map(|f| (f.dtype, f.group_size)),
            Some((Dtype::Int8, None))
        );
        let f = fmt_of(r#"{"quant_method":"fp8","weight_block_size":[128,128]}"#);
        assert_eq!(
            f.as_ref().map(|f| (f.dtype, f.group_size, f.scale_bits)),
            Some((Dtype::Fp8, Some(16384), 32))
        );
        let f = fmt_of(r#"{"quant_method":"bitsandbytes","load_in_4bit":true}"#);
        assert_eq!(
            f.as_ref().map(|f| (f.dtype, f.group_size)),
            Some((Dtype::Int4, Some(64)))
        );
        let f = fmt_of(
            r#"{"quant_method":"compressed-tensors","format":"nvfp4-pack-quantized","config_groups":{"group_0":{"weights":{"num_bits":4,"type":"float","group_size":16}}}}"#,
        );
        assert_eq!(
            f.as_ref().map(|f| (f.dtype, f.group_size, f.scale_bits)),
            Some((Dtype::Fp4, Some(16), 8))
        );
        let f = fmt_of(
            r#"{"quant_method":"compressed-tensors","config_groups":{"g":{"weights":{"num_bits":8,"type":"float"}}}}"#,
        );
        assert_eq!(f.as_ref().map(|f| f.dtype), Some(Dtype::Fp8));
        // A 3-bit GPTQ is sized as 4-bit (upper bound) with a warning, not refused.
        let f = fmt_of(r#"{"quant_method":"gptq","bits":3,"group_size":128}"#);
        assert_eq!(f.as_ref().map(|f| f.dtype), Some(Dtype::Int4));
        // Unknown methods: the checkpoint dtype, with a warning.
        let f = fmt_of(r#"{"quant_method":"hqq"}"#);
        assert_eq!(
            f.as_ref().map(|f| (f.dtype, f.method.as_str())),
            Some((Dtype::Fp16, "unknown"))
        );
    }

    #[test]
    fn awq_bytes() {
        // Linear elements: 2 × (4·256² + 3·256·512) = 1,310,720; int4 → 655,360 B; groups of
        // 128 → 10,240 × (16 + 4) bits = 25,600 B; the rest (embeddings 2·100·256 + norms
        // 5·256 = 52,480) in fp16 → 104,960 B.
        let text = r#"{"model_type":"llama","hidden_size":256,"intermediate_size":512,"num_hidden_layers":2,
            "num_attention_heads":4,"vocab_size":100,"torch_dtype":"float16",
            "quantization_config":{"quant_method":"awq","bits":4,"group_size":128}}"#;
        let m = parse_model_text(text).ok();
        let w = m
            .as_ref()
            .and_then(|m| crate::calc::weights::checkpoint(m, 1).ok());
        let q: u64 = 2 * (4 * 256 * 256 + 3 * 256 * 512);
        let rest: u64 = 2 * 100 * 256 + 5 * 256;
        assert_eq!(m.as_ref().map(|m| m.params.linear), Some(q));
        assert_eq!(
            w.map(|w| w.total.0),
            Some(q / 2 + (q / 128) * 20 / 8 + rest * 2)
        );
    }
}
