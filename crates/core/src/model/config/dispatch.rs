//! Which reader builds a config: the `model_type`s read as another family's, the families with
//! a builder of their own, and the generic decoder for an unknown type.

use super::kit::Parts;
use super::reader::Reader;
use super::{
    afmoe, bamba, classic, cohere2_moe, decoder, deepseek, defaults, exaone_moe, falcon_h1,
    gemma3n, gemma4, granite_hybrid, hunyuan, jamba, lfm2, lfm2_moe, longcat, mamba, mamba2,
    minicpmv, minimax, nemotron_h, others, qwen3_5, qwen3_next, qwen_v1,
};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::LedgerSource;

/// Normalizes `model_type` spellings to a family name.
pub(super) fn family(mt: &str) -> &str {
    FAMILY_OF
        .iter()
        .find(|(t, _)| *t == mt)
        .map_or(mt, |(_, f)| f)
}

/// The `model_type`s read as another family's (`gemma3_text` as `gemma3`).
const FAMILY_OF: &[(&str, &str)] = &[
    ("refinedweb", "falcon"),
    ("refinedwebmodel", "falcon"),
    ("rw", "falcon"),
    ("gemma3_text", "gemma3"),
    ("gemma3n_text", "gemma3n"),
    ("gemma4_text", "gemma4"),
    ("llama4_text", "llama4"),
    ("phi4", "phi3"),
    ("qwen2_vl", "qwen2"),
    ("qwen2_5_vl", "qwen2"),
    ("qwen2_vl_text", "qwen2"),
    ("qwen2_5_vl_text", "qwen2"),
    ("qwen3_vl_text", "qwen3"),
    ("qwen3_vl", "qwen3"),
    ("qwen3_vl_moe_text", "qwen3_moe"),
    ("qwen3_vl_moe", "qwen3_moe"),
    ("qwen3_5_text", "qwen3_5"),
    ("qwen3_5_moe_text", "qwen3_5_moe"),
    ("olmo3", "olmo2"),
    ("granitemoeshared", "granitemoe"),
    ("kanana", "llama"),
    ("smollm", "llama"),
    ("mllama_text_model", "mllama"),
    ("minimax_text_01", "minimax"),
    ("minimax_m1", "minimax"),
    // StableLM's remote code (stablelm-3b-4e1t, stablelm-zephyr-3b before transformers read
    // them as `stablelm`): the same modules, spelt `rope_pct`, `norm_eps`, `num_heads`.
    ("stablelm_epoch", "stablelm"),
];

/// A family's own builder: the reader, the family, the `model_type` as written.
type Builder = fn(&mut Reader, &str, &str) -> Result<Parts, CalcError>;

/// The families [`build_family`] reads with a builder of their own, and the builder (the rest
/// of the known ones are [`decoder::KNOWN`]). One table, so a family cannot have a builder and
/// still count as unknown, or the reverse.
const OWN_BUILDERS: &[(&str, Builder)] = &[
    ("gpt2", |r, _, _| classic::gpt2(r)),
    ("gpt_bigcode", |r, _, _| classic::gpt_bigcode(r)),
    ("opt", |r, _, _| classic::opt(r)),
    ("falcon", |r, _, mt| classic::falcon(r, mt)),
    ("gpt_neox", |r, _, _| classic::gpt_neox(r)),
    ("bloom", |r, _, _| classic::bloom(r)),
    ("phi", |r, _, _| classic::phi(r)),
    ("deepseek_v2", |r, fam, _| deepseek::build(r, fam)),
    ("deepseek_v3", |r, fam, _| deepseek::build(r, fam)),
    ("kimi_k2", |r, fam, _| deepseek::build(r, fam)),
    ("axk1", |r, fam, _| deepseek::build(r, fam)),
    ("deepseek_v32", |r, fam, _| deepseek::build(r, fam)),
    ("glm_moe_dsa", |r, fam, _| deepseek::build(r, fam)),
    // GLM-4.7-Flash (`Glm4MoeLiteForCausalLM`): DeepSeek-V3's layout with GLM's router.
    ("glm4_moe_lite", |r, fam, _| deepseek::build(r, fam)),
    ("mamba", |r, _, _| mamba::mamba(r)),
    ("mamba2", |r, _, _| mamba2::mamba2_model(r)),
    ("dbrx", |r, _, _| others::dbrx(r)),
    ("gemma3n", |r, _, _| gemma3n::build(r)),
    ("gemma4", |r, _, _| gemma4::build(r)),
    ("granitemoehybrid", |r, _, _| {
        granite_hybrid::granite_hybrid(r)
    }),
    ("qwen3_next", |r, _, _| qwen3_next::qwen3_next(r)),
    ("qwen3_5", |r, _, _| qwen3_5::qwen3_5(r, false)),
    ("qwen3_5_moe", |r, _, _| qwen3_5::qwen3_5(r, true)),
    ("mpt", |r, _, _| others::mpt(r)),
    ("gptj", |r, _, _| others::gptj(r)),
    ("nemotron_h", |r, _, _| nemotron_h::nemotron_h(r)),
    ("jamba", |r, _, _| jamba::jamba(r)),
    ("falcon_h1", |r, _, _| falcon_h1::falcon_h1(r)),
    ("bamba", |r, _, _| bamba::bamba(r)),
    ("lfm2", |r, _, _| lfm2::lfm2(r)),
    ("lfm2_moe", |r, _, _| lfm2_moe::build(r)),
    ("afmoe", |r, _, _| afmoe::build(r)),
    ("exaone_moe", |r, _, _| exaone_moe::build(r)),
    ("cohere2_moe", |r, _, _| cohere2_moe::build(r)),
    // Meituan LongCat-Flash: its published configs name no model_type, only the architecture
    // LongcatFlashForCausalLM.
    ("longcat_flash", |r, _, _| longcat::build(r)),
    ("minimax", |r, _, mt| minimax::build(r, mt)),
    ("qwen", |r, _, _| qwen_v1::qwen_v1(r)),
    ("minicpmv", |r, _, _| minicpmv::build(r)),
    ("hunyuan_v1_moe", |r, _, _| hunyuan::build(r, true)),
    // The remote code of Hunyuan-A13B and Hunyuan-Large (`HunYuanMoEV1ForCausalLM`).
    ("hunyuan", |r, _, _| hunyuan::build(r, false)),
];

/// The builder of a family in [`OWN_BUILDERS`].
fn own_builder(fam: &str) -> Option<Builder> {
    OWN_BUILDERS
        .iter()
        .find(|(name, _)| *name == fam)
        .map(|(_, b)| *b)
}

/// Whether a `model_type` is one this calculator reads by its family (not as a generic
/// decoder).
fn known_type(mt: &str) -> bool {
    let f = family(mt);
    own_builder(f).is_some() || decoder::KNOWN.contains(&f)
}

/// Whether a `model_type` is read by its family or has a class in the defaults table (a
/// multimodal wrapper such as `mistral3`, whose language model is nested).
pub(super) fn recognised(mt: &str) -> bool {
    known_type(mt) || defaults::class_for(mt).is_some()
}

/// Every recognised `model_type`: the families, the types read as another family's and the
/// classes of the defaults table (the candidates an architecture is matched against).
pub(super) fn known_types() -> &'static [&'static str] {
    static TYPES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    TYPES.get_or_init(|| {
        let mut v: Vec<&'static str> = OWN_BUILDERS.iter().map(|(name, _)| *name).collect();
        v.extend(decoder::KNOWN);
        v.extend(FAMILY_OF.iter().map(|(t, _)| *t));
        v.extend(defaults::table().iter().map(|c| c.model_type.as_str()));
        let mut known: Vec<&'static str> = Vec::new();
        for t in v {
            if recognised(t) && !known.contains(&t) {
                known.push(t);
            }
        }
        known
    })
}

/// Reads the language model of family `fam` (`mt` as written, for the warnings).
pub(super) fn build_family(r: &mut Reader, fam: &str, mt: &str) -> Result<Parts, CalcError> {
    if let Some(build) = own_builder(fam) {
        return build(r, fam, mt);
    }
    if decoder::KNOWN.contains(&fam) {
        return decoder::build(r, fam);
    }
    if r.find("kv_lora_rank").is_some() {
        r.warnings
            .push(Phrase::tr("wrn_unknown_type_mla").val("mt", mt));
        return deepseek::build(r, "deepseek_v3");
    }
    generic(r, mt)
}

/// Reads an unknown `model_type` as a generic decoder, warning with the keys it guessed (the
/// ledger lines that no key and no class gave).
fn generic(r: &mut Reader, mt: &str) -> Result<Parts, CalcError> {
    let before = r.ledger.len();
    let parts = decoder::build(r, "generic")?;
    let guessed: Vec<Phrase> = r
        .ledger
        .iter()
        .skip(before)
        .filter(|e| matches!(e.source, LedgerSource::Default(_)))
        .map(|e| Phrase::verbatim(format!("{} = {}", e.field, e.value)))
        .collect();
    let shown = if mt.is_empty() { "(none)" } else { mt };
    r.warnings.push(if guessed.is_empty() {
        Phrase::tr("wrn_unknown_type_generic").val("mt", shown)
    } else {
        Phrase::tr("wrn_unknown_type_guessed")
            .val("mt", shown)
            .sub("keys", Phrase::List(guessed))
    });
    Ok(parts)
}
