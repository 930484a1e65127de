//! The one translation table: every user-visible string, in English and Korean.
//!
//! Keys are stable snake_case identifiers. A test fails if any key is missing a language,
//! is empty, or is duplicated. UI code calls [`tr`]; nothing user-visible is written inline.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// A UI language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Korean.
    Ko,
}

impl Lang {
    /// Both languages.
    pub const ALL: &'static [Lang] = &[Lang::En, Lang::Ko];

    /// The BCP-47 code (`en`, `ko`).
    pub const fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    /// From a code such as `ko`, `ko-KR`, `en-US`; anything else is `None`.
    pub fn from_code(s: &str) -> Option<Lang> {
        let s = s.trim().to_ascii_lowercase();
        if s == "ko" || s.starts_with("ko-") {
            Some(Lang::Ko)
        } else if s == "en" || s.starts_with("en-") {
            Some(Lang::En)
        } else {
            None
        }
    }

    /// The BCP-47 locale whose number conventions the UI follows (`en-US`, `ko-KR`).
    pub const fn locale(self) -> &'static str {
        match self {
            Lang::En => "en-US",
            Lang::Ko => "ko-KR",
        }
    }

    /// How numbers are written in this language (CLDR `en` and `ko` agree: "," and ".").
    pub const fn number_symbols(self) -> crate::core::base::units::NumberSymbols {
        match self {
            Lang::En | Lang::Ko => crate::core::base::units::NumberSymbols::COMMA_DOT,
        }
    }
}

/// (key, English, Korean). Keep sorted by area; keys unique. A `const`: the program reads the
/// packed copy ([`entries`]), so the binary does not hold three (pointer, length) pairs per row.
pub const TABLE: &[(&str, &str, &str)] = &[
    ("app_title", "LLM Serving Calculator", "LLM 서빙 계산기"),
    ("app_tagline", "Will it fit, how many requests, how fast, at what cost — computed in your browser.", "들어갈까, 몇 개의 요청을, 얼마나 빠르게, 얼마의 비용으로 — 브라우저 안에서 계산합니다."),
    ("ui_chart_memory", "Memory per GPU: weights, KV cache, activations, overhead, free", "GPU별 메모리: 가중치, KV 캐시, 활성값, 오버헤드, 여유"),
    ("ui_chart_kv", "KV-cache memory against tokens per request, with each GPU's KV budget", "요청당 토큰 수에 따른 KV 캐시 메모리와 GPU별 KV 예산"),
    ("ui_chart_batch", "Maximum concurrent requests against context length", "컨텍스트 길이에 따른 최대 동시 요청 수"),
    ("ui_chart_cost", "Price per concurrent request (USD per hour)", "동시 요청 하나당 가격(시간당 USD)"),
    ("ui_explain_kv", "The KV cache grows with every generated token: size for the peak at the end of generation, or the server runs out of memory where a line crosses a GPU's budget.", "KV 캐시는 토큰을 생성할 때마다 커집니다. 생성이 끝날 때의 최대치에 맞춰야 하며, 선이 GPU 예산을 넘는 지점에서 메모리가 부족해집니다."),
    ("ui_explain_batch", "Longer requests leave room for fewer of them: the free memory after the weights decides the batch, and the batch decides how well the GPU's compute is used.", "요청이 길수록 동시에 들어가는 요청 수는 줄어듭니다. 가중치를 올리고 남은 메모리가 배치를 정하고, 배치가 GPU 연산을 얼마나 잘 쓰는지를 정합니다."),
    ("ui_explain_cost", "A pricier GPU can be cheaper per request when its extra memory serves many more requests at once.", "더 비싼 GPU도 남는 메모리로 훨씬 많은 요청을 동시에 처리하면 요청당 비용은 더 쌀 수 있습니다."),
    ("ui_lang_toggle", "한국어", "English"),
    ("ui_lang_toggle_label", "한국어: switch the language to Korean", "English: 언어를 영어로 바꾸기"),
    ("ui_theme_toggle", "Theme", "테마"),
    ("ui_theme_auto", "Auto theme", "자동 테마"),
    ("ui_theme_light", "Light theme", "밝은 테마"),
    ("ui_theme_dark", "Dark theme", "어두운 테마"),
    ("ui_copy_link", "Copy link", "링크 복사"),
    ("ui_link_copied", "Link copied", "링크를 복사했습니다"),
    ("ui_open_full", "Open the full calculator", "전체 계산기 열기"),
    ("embed_inputs_label", "Inputs of this widget", "이 위젯의 입력"),
    ("embed_gpu", "GPU", "GPU"),
    ("embed_batch", "Batch (requests decoded together)", "배치(함께 디코딩하는 요청 수)"),
    ("ui_section_model", "Model", "모델"),
    ("ui_section_gpus", "GPUs", "GPU"),
    ("ui_section_workload", "Workload", "워크로드"),
    ("ui_section_results", "Results", "결과"),
    ("ui_section_fit", "Does it fit?", "들어갈까?"),
    ("ui_section_charts", "Charts", "차트"),
    ("ui_privacy", "Everything is computed in this page; nothing you paste leaves your browser.", "모든 계산은 이 페이지 안에서 이루어지며, 붙여 넣은 내용은 브라우저 밖으로 나가지 않습니다."),
    ("ui_explain_fit", "Capacity comes first: the weights must fit, and what is left holds the KV cache, which grows with every token of every request. The practical count also keeps room for activations.", "먼저 용량입니다. 가중치가 들어가야 하고, 남은 메모리에 KV 캐시가 들어갑니다. KV 캐시는 모든 요청의 토큰마다 커집니다. 실용값은 활성값(중간 텐서)을 위한 여유도 남깁니다."),
    ("model_mode_preset", "Preset", "프리셋"),
    ("model_mode_paste", "Paste config.json", "config.json 붙여 넣기"),
    ("model_mode_quick", "Parameter count", "파라미터 수"),
    ("model_mode_label", "How to describe the model", "모델을 지정하는 방법"),
    ("model_preset_label", "Preset model", "프리셋 모델"),
    ("model_paste_label", "config.json or model.safetensors.index.json", "config.json 또는 model.safetensors.index.json"),
    ("model_paste_placeholder", "Paste a config.json here, drop a file, or choose one below.", "여기에 config.json을 붙여 넣거나, 파일을 끌어다 놓거나, 아래에서 고르세요."),
    ("model_upload", "Upload a file", "파일 올리기"),
    ("model_drop_hint", "Drop a config.json here", "config.json을 여기에 놓으세요"),
    ("model_file_too_large", "The file is larger than 2 MB; a config.json is a few kilobytes.", "파일이 2 MB보다 큽니다. config.json은 몇 킬로바이트입니다."),
    ("model_file_unreadable", "The file could not be read as text.", "파일을 텍스트로 읽을 수 없습니다."),
    ("model_quick_params", "Parameters", "파라미터 수"),
    ("model_quick_params_hint", "e.g. 7e9, 7b, 70,000,000,000", "예: 7e9, 7b, 70,000,000,000"),
    ("model_quick_dtype", "Precision", "정밀도"),
    ("model_name", "Name", "이름"),
    ("model_arch", "Architecture", "아키텍처"),
    ("model_layers", "Layers", "레이어"),
    ("model_ledger", "Assumption ledger", "가정 기록"),
    ("model_ledger_field", "Field", "항목"),
    ("model_ledger_value", "Value", "값"),
    ("model_ledger_source", "Source", "출처"),
    ("ledger_key", "config key", "config 키"),
    ("ledger_default", "default", "기본값"),
    ("ledger_derived", "derived", "계산값"),
    ("model_warnings", "Warnings", "경고"),
    ("model_error_kept", "The results below are from the last valid input.", "아래 결과는 마지막으로 올바르게 입력된 값의 결과입니다."),
    ("model_valid", "Valid config", "올바른 config"),
    ("gpu_search_label", "Add a GPU", "GPU 추가"),
    ("gpu_search_placeholder", "Search: H100, L40S, MI300X, TPU…", "검색: H100, L40S, MI300X, TPU…"),
    ("gpu_add", "Add", "추가"),
    ("gpu_remove", "Remove", "제거"),
    ("gpu_max_reached", "Up to 4 GPUs can be compared; remove one first.", "GPU는 4개까지 비교할 수 있습니다. 먼저 하나를 제거하세요."),
    ("gpu_no_match", "No accelerator matches.", "일치하는 가속기가 없습니다."),
    ("gpu_memory", "Memory", "메모리"),
    ("gpu_bandwidth", "Bandwidth", "대역폭"),
    ("gpu_price", "Price", "가격"),
    ("gpu_price_unknown", "no public price", "공개 가격 없음"),
    ("gpu_tp", "GPUs per replica (tensor parallel)", "복제본당 GPU 수(텐서 병렬)"),
    ("gpu_interconnect", "Interconnect", "인터커넥트"),
    ("ic_own", "The chip's own link (from the catalog)", "칩 자체 링크(카탈로그 기준)"),
    ("gpu_custom_title", "Custom accelerator", "사용자 정의 가속기"),
    ("gpu_custom_name", "Name", "이름"),
    ("gpu_custom_memory", "Memory", "메모리"),
    ("gpu_custom_bandwidth", "Bandwidth", "대역폭"),
    ("gpu_custom_tflops", "Dense BF16 peak", "Dense BF16 최대 성능"),
    ("gpu_custom_price", "Price (optional)", "가격(선택)"),
    ("gpu_custom_add", "Add custom accelerator", "사용자 정의 가속기 추가"),
    ("gpu_error", "This GPU could not be evaluated:", "이 GPU는 계산할 수 없습니다:"),
    ("wl_context", "Context length per request", "요청당 컨텍스트 길이"),
    ("wl_concurrency", "Concurrent requests", "동시 요청 수"),
    ("wl_weight_dtype", "Weight precision", "가중치 정밀도"),
    ("wl_kv_dtype", "KV-cache precision", "KV 캐시 정밀도"),
    ("wl_checkpoint", "checkpoint", "체크포인트"),
    ("wl_model_default", "auto", "자동"),
    ("wl_rule", "Budget rule", "예산 규칙"),
    ("wl_rule_textbook", "Textbook", "교과서"),
    ("wl_rule_vllm", "vLLM", "vLLM"),
    ("wl_gmu", "gpu_memory_utilization", "gpu_memory_utilization"),
    ("wl_block_size", "Block size", "블록 크기"),
    ("unit_tokens", "tokens", "토큰"),
    ("unit_requests", "requests", "요청"),
    ("unit_gib", "GiB", "GiB"),
    ("unit_gbps", "GB/s", "GB/s"),
    ("unit_tflops", "TFLOP/s", "TFLOP/s"),
    ("unit_usd_h", "USD/h", "USD/시간"),
    ("err_not_a_number", "Enter a whole number.", "정수를 입력하세요."),
    ("err_range", "Must be between {min} and {max}.", "{min}에서 {max} 사이여야 합니다."),
    ("err_decimal", "Enter a number between {min} and {max}.", "{min}에서 {max} 사이의 수를 입력하세요."),
    ("card_params", "Parameters", "파라미터"),
    ("card_params_total", "total", "전체"),
    ("card_params_active", "active per token", "토큰당 활성"),
    ("card_weights", "Weight memory", "가중치 메모리"),
    ("card_kv_token", "KV cache per token", "토큰당 KV 캐시"),
    ("card_kv_request", "KV cache per request", "요청당 KV 캐시"),
    ("card_kv_total", "KV cache, all requests", "전체 요청의 KV 캐시"),
    ("card_max_requests", "Max concurrent requests", "최대 동시 요청 수"),
    ("card_theoretical", "theoretical", "이론값"),
    ("card_vllm_log", "vLLM would log", "vLLM 로그 예상"),
    ("card_rule_textbook", "textbook rule, practical", "교과서 규칙, 실용값"),
    ("card_rule_vllm", "vLLM rule", "vLLM 규칙"),
    ("math_show", "Show the math", "계산 과정 보기"),
    ("math_formula", "Formula", "공식"),
    ("math_substituted", "Substituted", "대입"),
    ("math_result", "Result", "결과"),
    ("math_terms", "Inputs", "입력값"),
    ("src_config_key", "config key", "config 키"),
    ("src_default", "default", "기본값"),
    ("src_derived", "derived", "계산값"),
    ("src_catalog", "catalog", "카탈로그"),
    ("src_user", "your input", "사용자 입력"),
    ("params_total", "Total parameters", "전체 파라미터 수"),
    ("weights_bytes", "Weight memory", "가중치 메모리"),
    ("kv_per_token", "KV cache per token", "토큰당 KV 캐시"),
    // Model half of the core (config, weights, kv): derivation titles, terms and notes.
    ("kv_per_sequence", "KV cache of one sequence", "시퀀스 하나의 KV 캐시"),
    ("kv_per_batch", "KV cache of the batch", "배치 전체의 KV 캐시"),
    ("state_bytes", "Recurrent state per sequence", "시퀀스당 순환 상태"),
    ("term_params", "parameters", "파라미터 수"),
    ("term_quantized_params", "quantized parameters", "양자화된 파라미터 수"),
    ("term_bits", "bits per quantized element", "양자화 원소당 비트"),
    ("term_group_size", "elements per scale group", "스케일 그룹당 원소 수"),
    ("term_scale_bits", "bits per scale", "스케일당 비트"),
    ("term_zero_point_bits", "bits per zero point", "영점당 비트"),
    ("term_bytes_per_param", "bytes per parameter", "파라미터당 바이트"),
    ("term_tp", "tensor-parallel GPUs", "텐서 병렬 GPU 수"),
    ("term_index_total_size", "total_size in the safetensors index", "safetensors 인덱스의 total_size"),
    ("term_layers", "layers", "레이어 수"),
    ("term_kv_bytes", "bytes per cached element", "캐시 원소당 바이트"),
    ("term_tokens", "tokens per sequence", "시퀀스당 토큰 수"),
    ("term_batch", "sequences in the batch", "배치의 시퀀스 수"),
    ("term_state_elems", "state elements per layer", "레이어당 상태 원소 수"),
    ("note_scales_not_counted", "One scale per tensor or channel is not counted (below 0.01 % of the bytes).", "텐서나 채널마다 하나인 스케일은 세지 않았습니다 (바이트의 0.01 % 미만)."),
    ("note_tp_weights", "Per GPU, as vLLM lays the model out: attention heads, MLP, experts, embeddings and lm_head (vocab-parallel) are split across the GPUs; norms, routers, position embeddings and MLA's down-projections (q_a_proj, kv_a_proj_with_mqa, with their norms) are copied to each, and so is one K and V head when there are fewer KV heads than GPUs. Each part keeps its own bytes per parameter.", "GPU당 (vLLM의 배치 방식): 어텐션 헤드, MLP, 전문가, 임베딩, lm_head(어휘 병렬)는 GPU들에 나뉘고, 정규화·라우터·위치 임베딩과 MLA의 하향 투영(q_a_proj, kv_a_proj_with_mqa 및 그 정규화)은 GPU마다 복사되며, KV 헤드가 GPU 수보다 적으면 K·V 헤드 하나도 복사됩니다. 각 부분은 자기 파라미터당 바이트를 유지합니다."),
    ("note_exact_index", "Exact stored bytes from the pasted model.safetensors.index.json.", "붙여 넣은 model.safetensors.index.json의 정확한 저장 바이트입니다."),
    ("note_kv_window_cap", "Sliding-window layers keep at most the window of tokens.", "슬라이딩 윈도 레이어는 윈도 크기만큼의 토큰만 보관합니다."),
    ("note_mla_no_x2", "MLA caches one latent per token (no separate K and V).", "MLA는 토큰마다 잠재 벡터 하나만 저장합니다 (K와 V를 따로 두지 않음)."),
    ("note_kv_heads_per_rank", "Each GPU holds max(1, KV heads / TP) heads; the MLA latent is copied to every GPU.", "GPU마다 max(1, KV 헤드 / TP)개의 헤드를 보관하고, MLA 잠재 벡터는 모든 GPU에 복사됩니다."),
    ("note_state_dtype", "The recurrent state is kept in the model's precision, as vLLM and Hugging Face do by default.", "순환 상태는 vLLM과 Hugging Face의 기본값처럼 모델 정밀도로 보관합니다."),
    ("state_dtype_model", "the model's own precision", "모델 자체의 정밀도"),
    ("kv_per_request", "KV cache per request", "요청당 KV 캐시"),
    ("kv_total", "KV cache for all requests", "전체 요청의 KV 캐시"),
    ("cost_per_request", "Cost per request", "요청당 비용"),
    ("note_kv_mixed_layers", "Layers differ (sliding windows, MLA or recurrent layers), so the sum runs layer by layer.", "레이어마다 다르므로(슬라이딩 윈도, MLA, 순환 레이어) 레이어별로 더합니다."),
    ("note_kv_window_or_state", "Sliding-window layers keep at most their window, and recurrent layers a fixed state, so this is less than KV per token × length.", "슬라이딩 윈도 레이어는 윈도만큼만, 순환 레이어는 고정된 상태만 저장하므로 토큰당 KV × 길이보다 작습니다."),
    ("fit_gpu", "GPU", "GPU"),
    ("fit_verdict", "Verdict", "판정"),
    ("fit_used", "Used / capacity", "사용 / 용량"),
    ("fit_requests", "Requests", "요청 수"),
    ("fit_cost", "Price per hour", "시간당 가격"),
    ("fit_cost_per_request", "Per request-hour", "요청·시간당"),
    ("fit_cheapest", "cheapest per request", "요청당 가장 저렴"),
    ("fit_weights", "Weights", "가중치"),
    ("fit_kv", "KV cache", "KV 캐시"),
    ("fit_activations", "Activations", "활성값"),
    ("fit_overhead", "Runtime overhead", "런타임 오버헤드"),
    ("fit_free", "Free", "여유"),
    ("fit_over", "Over capacity", "용량 초과"),
    ("fit_compare", "{a} costs {price}× as much per hour as {b} and serves {req}× the requests: {cost}× the cost per request.", "{a}는 {b}보다 시간당 {price}배 비싸고 요청은 {req}배 처리합니다: 요청당 비용은 {cost}배입니다."),
    ("verdict_fits", "Fits", "들어갑니다"),
    ("verdict_partial", "Fits fewer requests", "요청 수가 부족합니다"),
    ("verdict_no_fit", "Does not fit", "들어가지 않습니다"),
    ("suggest_title", "What would fit", "이렇게 하면 들어갑니다"),
    ("suggest_tp", "Shard over {gpus} GPUs: {requests} requests fit.", "GPU {gpus}개로 나누면 요청 {requests}개가 들어갑니다."),
    ("suggest_precision", "Store the weights in {dtype} ({weights}): {requests} requests fit.", "가중치를 {dtype}({weights})로 저장하면 요청 {requests}개가 들어갑니다."),
    ("suggest_context", "Shorten requests to {tokens} tokens: one request fits.", "요청을 {tokens} 토큰으로 줄이면 요청 하나가 들어갑니다."),
    ("notice_title", "Some link parameters were not used", "링크의 일부 매개변수를 사용하지 않았습니다"),
    ("notice_dismiss", "Dismiss", "닫기"),
    ("notice_invalid", "The link parameter \"{param}\" could not be read; its default is used.", "링크 매개변수 \"{param}\"을 읽을 수 없어 기본값을 사용합니다."),
    ("notice_out_of_range", "The link parameter \"{param}\" is out of range; its default is used.", "링크 매개변수 \"{param}\"이 범위를 벗어나 기본값을 사용합니다."),
    ("notice_unknown_param", "The link parameter \"{param}\" is not known to this version and was ignored.", "링크 매개변수 \"{param}\"은 이 버전에서 알 수 없어 무시했습니다."),
    ("notice_unknown_id", "\"{param}\" is not in this version's lists (an outdated link?); the default is used.", "\"{param}\"은 이 버전의 목록에 없습니다(오래된 링크일까요?). 기본값을 사용합니다."),
    ("notice_too_many", "The link parameter \"{param}\" lists more than 4 GPUs; the first 4 are shown.", "링크 매개변수 \"{param}\"에 GPU가 4개보다 많아 처음 4개만 보여 줍니다."),
    ("notice_newer_version", "The link was made by a newer version (\"{param}\"); it was read as far as possible.", "더 새로운 버전에서 만든 링크입니다(\"{param}\"). 가능한 만큼 읽었습니다."),
    ("notice_query_too_long", "The link is too long; only its beginning was read (\"{param}\").", "링크가 너무 길어 앞부분만 읽었습니다(\"{param}\")."),
    ("notice_config_not_in_link", "The pasted config is too large for a link (over 8 KB), so the link leaves it out (\"{param}\").", "붙여 넣은 config가 링크에 담기에 너무 큽니다(8 KB 초과). 링크에는 포함하지 않습니다(\"{param}\")."),
    ("notice_repeated", "{count}×: {message}", "{count}회: {message}"),
    ("notice_show_all", "Show all {count}", "모두 보기({count}개)"),
    ("notice_show_fewer", "Show fewer", "줄여 보기"),
    ("nav_label", "Sections of the page", "페이지의 구역"),
    ("nav_inputs", "Inputs", "입력"),
    ("nav_fit", "Fit", "적합성"),
    ("nav_charts", "Charts", "차트"),
    ("nav_roofline", "Roofline", "루프라인"),
    ("nav_matmul", "Matmul", "행렬 곱"),
    ("nav_perf", "Performance", "성능"),
    ("nav_accuracy", "Accuracy", "정확도"),
    ("nav_planner", "Planner", "용량 계획"),
    ("notice_error_prefix", "Error", "오류"),
    ("ic_pcie4", "PCIe Gen4 x16: 32 GB/s each way (64 GB/s both ways), through the host; fine when GPUs rarely talk.", "PCIe Gen4 x16: 한 방향 32 GB/s(양방향 64 GB/s), 호스트를 거칩니다. GPU끼리 통신이 적을 때 충분합니다."),
    ("ic_pcie5", "PCIe Gen5 x16: 64 GB/s each way (128 GB/s both ways), through the host.", "PCIe Gen5 x16: 한 방향 64 GB/s(양방향 128 GB/s), 호스트를 거칩니다."),
    ("ic_nvlink_bridge", "NVLink bridge joining 2 cards: 600 GB/s both ways, 300 GB/s each way.", "NVLink 브리지로 카드 2장 연결: 양방향 600 GB/s, 한 방향 300 GB/s."),
    ("ic_nvswitch", "NVLink + NVSwitch: up to 8 GPUs at 900 GB/s each (450 GB/s each way); any pair gets the full bandwidth.", "NVLink + NVSwitch: GPU 최대 8개, 각 900 GB/s(한 방향 450 GB/s). 어느 두 GPU든 전체 대역폭을 씁니다."),
    ("ic_mesh8", "8 GPUs wired directly without a switch: about 128 GB/s per link (64 GB/s each way per peer).", "스위치 없이 직접 연결된 GPU 8개: 링크당 약 128 GB/s(상대 GPU마다 한 방향 64 GB/s)."),
    ("ic_inter_node", "Across nodes: about 50 GB/s per GPU each way (one 400 Gb/s NIC per GPU), 18× less than NVSwitch.", "노드 간: GPU당 한 방향 약 50 GB/s(GPU마다 400 Gb/s NIC 하나), NVSwitch보다 18배 느립니다."),
    ("precision_not_supported", "This chip has no {requested} support in hardware; compute runs at {used} (weights are up-converted).", "이 칩은 하드웨어에서 {requested}를 지원하지 않습니다. 연산은 {used}로 실행됩니다(가중치를 변환해 올립니다)."),
    ("precision_same_width", "No dense {requested} peak is published for this chip; {used}, at the same width, is used instead.", "이 칩은 {requested}의 dense 최대 성능을 공개하지 않습니다. 같은 폭인 {used}를 대신 씁니다."),
    ("precision_no_peak", "No dense {requested} peak is published for this chip; compute-bound estimates need a figure (enter it as a custom accelerator).", "이 칩은 {requested}의 dense 최대 성능을 공개하지 않습니다. 연산 한계 추정에는 값이 필요합니다(사용자 정의 가속기로 입력하세요)."),
    // Charts (src/charts): axis titles carry their units.
    ("chart_no_data", "Nothing to draw yet: choose a model and at least one GPU.", "아직 그릴 것이 없습니다. 모델과 GPU를 하나 이상 고르세요."),
    ("chart_error_draw", "The chart could not be drawn.", "차트를 그리지 못했습니다."),
    ("chart_error_too_small", "The chart area is too small to draw in.", "차트 영역이 너무 작아 그릴 수 없습니다."),
    ("chart_gpu", "GPU", "GPU"),
    ("chart_weights", "Weights", "가중치"),
    ("chart_kv", "KV cache", "KV 캐시"),
    ("chart_activations", "Activations", "활성값"),
    ("chart_overhead", "Runtime overhead", "런타임 오버헤드"),
    ("chart_free", "Free", "여유"),
    ("chart_over", "Over capacity", "용량 초과"),
    ("chart_capacity", "Capacity", "용량"),
    ("chart_used", "Used", "사용"),
    ("chart_fits", "Fits", "들어감"),
    ("chart_does_not_fit", "Does not fit", "들어가지 않음"),
    ("chart_memory_axis", "Memory per GPU (GiB)", "GPU당 메모리 (GiB)"),
    ("chart_tokens_axis", "Tokens per request", "요청당 토큰 수"),
    ("chart_kv_axis", "KV cache (GiB)", "KV 캐시 (GiB)"),
    ("chart_batch", "Batch", "배치"),
    ("chart_kv_budget", "KV budget", "KV 예산"),
    ("chart_runs_out_at", "Out of memory from (tokens per request)", "메모리가 부족해지는 요청당 토큰 수"),
    ("chart_current_context", "Context", "컨텍스트"),
    ("chart_context_axis", "Context length per request (tokens)", "요청당 컨텍스트 길이 (토큰)"),
    ("chart_requests_axis", "Max concurrent requests", "최대 동시 요청 수"),
    ("chart_theoretical", "Theoretical", "이론값"),
    ("chart_practical", "Practical", "실용값"),
    ("chart_requests", "requests", "요청"),
    ("chart_intensity_axis", "Arithmetic intensity (FLOP/B)", "연산 강도 (FLOP/B)"),
    ("chart_attainable_axis", "Attainable performance (FLOP/s)", "달성 가능한 성능 (FLOP/s)"),
    ("chart_ridge", "Ridge", "리지 포인트"),
    ("chart_bound_memory", "Bandwidth-bound", "대역폭 제한"),
    ("chart_bound_compute", "Compute-bound", "연산 제한"),
    ("chart_phase_prefill", "Prefill", "프리필"),
    ("chart_phase_decode", "Decode", "디코드"),
    ("chart_phase_matmul", "Matmul", "행렬 곱"),
    ("chart_phase_reference", "Reference workload", "참고 워크로드"),
    ("chart_flops", "FLOPs", "연산량 (FLOP)"),
    ("chart_bytes", "Bytes moved", "이동한 바이트"),
    ("chart_intensity", "Intensity", "연산 강도"),
    ("chart_attainable", "Attainable", "달성 가능"),
    ("chart_bandwidth", "Bandwidth", "대역폭"),
    ("chart_batch1", "at batch 1", "배치 1일 때"),
    ("chart_total_tps_axis", "Total output tokens/s", "전체 출력 토큰/초"),
    ("chart_user_tps_axis", "Output tokens/s per user", "사용자당 출력 토큰/초"),
    ("chart_operating_point", "Operating point", "운영 지점"),
    ("chart_memory_full", "Memory full", "메모리 가득 참"),
    ("chart_tpot", "Time per output token", "출력 토큰당 시간"),
    ("chart_cost_request_hour_axis", "US$ per request-hour", "요청·시간당 달러"),
    ("chart_cost_mtok_axis", "US$ per million output tokens", "출력 토큰 100만 개당 달러"),
    ("chart_price_per_hour", "US$ per hour", "시간당 달러"),
    ("chart_no_price", "No public price", "공개 가격 없음"),
    ("chart_nothing_fits", "No request fits", "들어가는 요청 없음"),
    ("chart_export_png", "Download PNG", "PNG 내려받기"),
    ("chart_export_svg", "Download SVG", "SVG 내려받기"),
    ("chart_data_table", "Show the data as a table", "데이터를 표로 보기"),
    ("matmul_square_1024", "M = N = K = 1,024", "M = N = K = 1,024"),
    ("matmul_square_4096", "M = N = K = 4,096", "M = N = K = 4,096"),
    ("matmul_prefill_projection", "Prefill projection (s = 1,024, h = 4,096)", "프리필 projection (s = 1,024, h = 4,096)"),
    ("matmul_decode_projection", "Decode projection (s = 1, h = 4,096)", "디코드 projection (s = 1, h = 4,096)"),
    // core::memory and core::roofline: derivation titles, notes, terms, operators.
    ("mem_weights_per_gpu", "Weights per GPU", "GPU당 가중치"),
    ("mem_activation_estimate", "Activation reserve (estimate)", "활성값 예비 메모리 (추정)"),
    ("mem_requests_theoretical", "Concurrent requests in theory", "이론상 동시 요청 수"),
    ("mem_requests_practical", "Concurrent requests in practice", "실제 동시 요청 수"),
    ("mem_rule_of_thumb", "Rule of thumb: GPU memory ≈ 2 × model size", "경험칙: GPU 메모리 ≈ 2 × 모델 크기"),
    ("vllm_available_kv", "Available KV cache memory (vLLM)", "사용 가능한 KV 캐시 메모리 (vLLM)"),
    ("vllm_bytes_per_block", "Bytes per KV block", "KV 블록당 바이트"),
    ("vllm_num_gpu_blocks", "GPU KV blocks", "GPU KV 블록 수"),
    ("vllm_kv_cache_tokens", "GPU KV cache size in tokens", "GPU KV 캐시 크기 (토큰)"),
    ("vllm_max_concurrency", "Maximum concurrency at max_model_len", "max_model_len 기준 최대 동시성"),
    ("roof_ridge_point", "Ridge point", "리지 포인트"),
    ("roof_matmul_intensity", "Matmul arithmetic intensity", "행렬곱 연산 강도"),
    ("note_activation_unknown_arch", "Without the model's architecture the activation reserve is taken as 0; paste config.json to estimate it.", "모델 구조를 모르면 활성값 예비 메모리를 0으로 둡니다. config.json을 붙여 넣으면 추정합니다."),
    ("note_activation_estimate", "Estimate: one forward pass over a chunk of max_num_batched_tokens (residual, normed copy and the widest intermediate) plus fp32 logits for max_num_seqs rows.", "추정: max_num_batched_tokens 묶음 한 번의 순전파(잔차, 정규화 사본, 가장 넓은 중간 텐서)와 max_num_seqs 행의 fp32 로짓."),
    ("note_marketed_as_gib", "The marketed capacity is read as GiB, as vendors mean it (\"24 GB\" → 24 GiB).", "광고된 용량은 제조사 관례대로 GiB로 읽습니다 (\"24 GB\" → 24 GiB)."),
    ("note_activation_reserve", "Practical count: the driver-reported memory, minus room for activations (intermediate tensors).", "실제 값: 드라이버가 보고하는 메모리에서 활성값(중간 텐서) 공간을 뺍니다."),
    ("note_rule_of_thumb", "Size for the peak at the end of generation; prefix caching wants more.", "생성이 끝날 때의 최대치에 맞춰 잡으세요. 프리픽스 캐싱은 더 필요합니다."),
    ("note_vllm_no_memory", "Weights, activations and non-torch memory exceed the memory vLLM may use: it would refuse to start.", "가중치, 활성값, 비-torch 메모리가 vLLM이 쓸 수 있는 메모리를 넘습니다. vLLM이 시작하지 않습니다."),
    ("note_vllm_no_attention", "No attention layers: vLLM pages no KV cache for this model (recurrent state pages are not modelled).", "어텐션 층이 없어 vLLM이 KV 캐시를 페이지로 두지 않습니다 (순환 상태 페이지는 모델링하지 않음)."),
    ("note_vllm_sliding_as_full", "Layer page sizes differ, so sliding-window layers are paged as full attention, as vLLM does in that case.", "층마다 페이지 크기가 달라, vLLM처럼 슬라이딩 윈도우 층을 전체 어텐션으로 페이지합니다."),
    ("note_vllm_padding_layers", "Layer counts do not fill whole groups: vLLM adds padding layers that waste some KV memory.", "층 수가 그룹을 채우지 못해 vLLM이 패딩 층을 더하며 KV 메모리가 일부 낭비됩니다."),
    ("note_vllm_hybrid", "vLLM's hybrid allocator: full and sliding-window layers in equal-size groups share one block pool; sliding groups keep only window − 1 + max_num_batched_tokens tokens.", "vLLM 하이브리드 할당기: 전체 어텐션과 슬라이딩 윈도우 층이 같은 크기의 그룹으로 하나의 블록 풀을 공유하고, 슬라이딩 그룹은 window − 1 + max_num_batched_tokens 토큰만 보관합니다."),
    ("note_vllm_gib", "vLLM reports GiB (2^30 bytes); older versions print \"GB\" for GiB.", "vLLM은 GiB(2^30 바이트)로 보고하며, 예전 버전은 GiB를 \"GB\"로 출력합니다."),
    ("note_vllm_mla_latent", "MLA layers cache only the latent (kv_lora_rank + qk_rope_head_dim), replicated on every GPU.", "MLA 층은 잠재 벡터(kv_lora_rank + qk_rope_head_dim)만 캐시하며 모든 GPU에 복제됩니다."),
    ("note_half_precision_n_over_3", "In half precision (2 bytes) this is M·N·K / (M·K + K·N + M·N), n / 3 when M = N = K = n.", "반정밀도(2바이트)에서는 M·N·K / (M·K + K·N + M·N)이며, M = N = K = n이면 n / 3입니다."),
    ("note_op_bytes_split", "Bytes = weights (weight precision) + activations (activation precision) + KV cache (KV precision).", "바이트 = 가중치(가중치 정밀도) + 활성값(활성값 정밀도) + KV 캐시(KV 정밀도)."),
    ("term_weights", "Weights", "가중치"),
    ("term_params_replicated", "Parameters replicated on every GPU", "모든 GPU에 복제되는 파라미터"),
    ("term_chunk_tokens", "Tokens per forward pass (max_num_batched_tokens)", "순전파당 토큰 (max_num_batched_tokens)"),
    ("term_hidden", "Hidden size", "은닉 크기"),
    ("term_widest_intermediate", "Widest intermediate per GPU", "GPU당 가장 넓은 중간 텐서"),
    ("term_act_bytes", "Bytes per activation", "활성값당 바이트"),
    ("term_logit_rows", "Sequences sampled (max_num_seqs)", "샘플링하는 시퀀스 (max_num_seqs)"),
    ("term_vocab", "Vocabulary size", "어휘 크기"),
    ("term_kv_per_request", "KV cache per request", "요청당 KV 캐시"),
    ("term_capacity_marketed", "Marketed memory", "광고된 메모리"),
    ("term_capacity_usable", "Driver-reported memory", "드라이버 보고 메모리"),
    ("term_activation_reserve", "Activation reserve", "활성값 예비 메모리"),
    ("term_available_kv", "Available KV memory (given)", "사용 가능한 KV 메모리 (입력)"),
    ("term_total_gpu_memory", "Total GPU memory", "전체 GPU 메모리"),
    ("term_gpu_memory_utilization", "gpu_memory_utilization", "gpu_memory_utilization"),
    ("term_activation_peak", "Activation peak", "활성값 최대치"),
    ("term_non_torch", "Non-torch memory", "비-torch 메모리"),
    ("term_block_size", "Block size", "블록 크기"),
    ("term_kv_per_token_gpu", "KV bytes per token per GPU", "GPU당 토큰당 KV 바이트"),
    ("term_max_model_len", "max_model_len", "max_model_len"),
    ("term_peak_flops", "Peak compute", "최대 연산 성능"),
    ("term_bandwidth", "Memory bandwidth", "메모리 대역폭"),
    ("term_m", "Rows of the left matrix (M)", "왼쪽 행렬의 행 (M)"),
    ("term_k", "Shared dimension (K)", "공유 차원 (K)"),
    ("term_n", "Columns of the right matrix (N)", "오른쪽 행렬의 열 (N)"),
    ("op_norm", "Norms", "정규화"),
    ("op_attn_q", "Q projection", "Q 투영"),
    ("op_attn_k", "K projection", "K 투영"),
    ("op_attn_v", "V projection", "V 투영"),
    ("op_attn_o", "Output projection", "출력 투영"),
    ("op_attn_q_a", "Q down-projection (MLA)", "Q 다운 투영 (MLA)"),
    ("op_attn_q_b", "Q up-projection (MLA)", "Q 업 투영 (MLA)"),
    ("op_attn_kv_a", "KV down-projection (MLA)", "KV 다운 투영 (MLA)"),
    ("op_attn_kv_b", "KV up-projection (MLA)", "KV 업 투영 (MLA)"),
    ("op_attn_score", "Attention scores (QKᵀ, softmax)", "어텐션 점수 (QKᵀ, softmax)"),
    ("op_attn_av", "Attention weighted sum (PV)", "어텐션 가중합 (PV)"),
    ("op_ssm_in", "SSM input projection", "SSM 입력 투영"),
    ("op_ssm_scan", "SSM scan", "SSM 스캔"),
    ("op_ssm_out", "SSM output projection", "SSM 출력 투영"),
    ("op_mlp_gate_up", "MLP gate and up", "MLP 게이트·업"),
    ("op_mlp_up", "MLP up", "MLP 업"),
    ("op_mlp_down", "MLP down", "MLP 다운"),
    ("op_moe_router", "MoE router", "MoE 라우터"),
    ("op_moe_experts", "MoE experts", "MoE 전문가"),
    ("op_moe_shared", "MoE shared experts", "MoE 공유 전문가"),
    ("op_final_norm", "Final norm", "최종 정규화"),
    ("op_lm_head", "LM head", "LM 헤드"),
    ("op_prefill_total", "Prefill (whole model)", "프리필 (모델 전체)"),
    ("op_decode_total", "Decode (whole model)", "디코드 (모델 전체)"),
    ("note_vllm_state_not_paged", "This model also keeps recurrent (SSM) state; vLLM pages it together with the KV cache, which is not modelled here: only attention layers are counted.", "이 모델은 순환(SSM) 상태도 가집니다. vLLM은 이를 KV 캐시와 함께 페이지로 관리하지만 여기서는 모델링하지 않고 어텐션 층만 셉니다."),
    ("roof_attainable", "Attainable compute", "달성 가능한 연산 성능"),
    ("note_bound_memory", "Below the ridge point: limited by memory bandwidth; cut the bytes moved (quantize, batch, cache).", "리지 포인트 아래: 메모리 대역폭에 묶입니다. 옮기는 바이트를 줄이세요 (양자화, 배치, 캐시)."),
    ("note_bound_compute", "At or above the ridge point: limited by compute; cut the FLOPs.", "리지 포인트 이상: 연산에 묶입니다. FLOPs를 줄이세요."),
    // Performance model (core::perf).
    ("perf_ttft", "Time to first token", "첫 토큰까지의 시간(TTFT)"),
    ("perf_tpot", "Time per output token", "출력 토큰당 시간(TPOT)"),
    ("perf_e2e_latency", "End-to-end latency", "전체 응답 지연 시간"),
    ("perf_output_tokens_per_s", "Output tokens per second (all users)", "초당 출력 토큰 수(전체 사용자)"),
    ("perf_usd_per_million_tokens", "Cost per million output tokens", "출력 토큰 100만 개당 비용"),
    ("perf_tokens_per_joule", "Output tokens per joule at TDP", "TDP 기준 줄(J)당 출력 토큰 수"),
    ("perf_tokens_per_s_per_user", "Output tokens per second per user", "사용자당 초당 출력 토큰 수"),
    ("perf_max_batch", "Largest batch that fits in memory", "메모리에 들어가는 최대 배치"),
    ("perf_note_precision", "{gpu}: {message}", "{gpu}: {message}"),
    ("perf_note_no_peak", "{gpu} publishes no dense {dtype} peak, so compute time is left out: TTFT and large-batch times are lower bounds (enter a custom accelerator with a peak to include it).", "{gpu}는 {dtype}의 dense 최대 성능을 공개하지 않아 연산 시간을 빼고 계산했습니다. TTFT와 큰 배치의 시간은 하한값입니다(최대 성능을 넣은 사용자 정의 가속기로 포함할 수 있습니다)."),
    ("perf_note_crosses_nodes", "TP {tp} is larger than the {domain}-GPU scale-up domain of {gpu}: the replica crosses nodes (about 50 GB/s per GPU); keep replicas inside one node and add replicas instead.", "TP {tp}는 {gpu}의 스케일업 도메인(GPU {domain}개)보다 커서 레플리카가 노드를 넘어갑니다(GPU당 약 50 GB/s). 레플리카는 한 노드 안에 두고 레플리카 수를 늘리세요."),
    ("perf_note_quick_mode", "Quick mode: no layer structure, so attention and the KV cache are not timed.", "간단 모드: 층 구조가 없어 어텐션과 KV 캐시의 시간은 계산하지 않습니다."),
    ("perf_note_batch_no_fit", "Batch {batch} does not fit: weights plus the KV cache of {tokens} tokens per sequence allow at most {max_batch} on {gpu} × TP {tp}.", "배치 {batch}는 들어가지 않습니다. 가중치와 시퀀스당 {tokens} 토큰의 KV 캐시로는 {gpu} × TP {tp}에서 최대 {max_batch}까지입니다."),
    ("term_memory_utilization", "share of device memory the engine may use", "엔진이 쓸 수 있는 장치 메모리 비율"),
    ("term_flops_per_gpu", "FLOPs per GPU", "GPU당 FLOP 수"),
    ("term_bytes_per_gpu", "bytes moved per GPU", "GPU당 이동 바이트"),
    ("term_peak", "dense peak at the compute precision", "연산 정밀도의 dense 최대 성능"),
    ("term_compute_eff", "compute efficiency (fitted)", "연산 효율(보정값)"),
    ("term_bandwidth_eff", "bandwidth efficiency (fitted)", "대역폭 효율(보정값)"),
    ("term_context", "tokens in context", "문맥의 토큰 수"),
    ("term_output_len", "output tokens", "출력 토큰 수"),
    ("term_price", "price per GPU-hour", "GPU 시간당 가격"),
    ("term_tdp", "board power (TDP)", "보드 전력(TDP)"),
    ("note_tdp_upper_bound", "TDP is the maximum board power: energy per token is an upper-bound estimate.", "TDP는 보드의 최대 전력이므로 토큰당 에너지는 상한 추정치입니다."),
    // Capacity planning and loading (core::capacity, core::loading).
    ("plan_tpot_under_load", "Time per output token under continuous batching", "연속 배칭에서 출력 토큰당 시간"),
    ("plan_ttft_under_load", "Time to first token of a new request", "새 요청의 첫 토큰까지 시간"),
    ("term_decode_step", "one decode step of the batch", "배치의 디코드 스텝 하나"),
    ("term_prefill_batch", "prefill pass over the batch's prompts", "배치 프롬프트 전체의 프리필"),
    ("term_prefill_one", "prefill of one prompt", "프롬프트 하나의 프리필"),
    ("note_chunked_prefill", "Continuous batching with chunked prefill: each request is prefilled once over its Ō steps, so every step also carries B / Ō prompts.", "청크 프리필을 쓰는 연속 배칭: 요청마다 Ō 스텝 동안 한 번 프리필되므로, 스텝마다 프롬프트 B / Ō개를 함께 처리합니다."),
    ("note_ttft_wait", "A new request waits for the step in flight, then its own prompt is prefilled; the whole batch is not prefilled at once.", "새 요청은 진행 중인 스텝을 기다린 뒤 자기 프롬프트만 프리필됩니다. 배치 전체를 한꺼번에 프리필하지 않습니다."),
    ("plan_e2e", "End-to-end latency of the mean request", "평균 요청의 종단 간 지연"),
    ("plan_requests_per_replica", "Requests per second per replica", "레플리카당 초당 요청 수"),
    ("plan_replicas_peak", "Replicas for the peak", "피크에 필요한 레플리카"),
    ("plan_cost_peak", "Cost at the peak", "피크 시 비용"),
    ("note_littles_law", "Little's law: requests in flight = rate × time each one stays.", "리틀의 법칙: 처리 중인 요청 수 = 도착률 × 요청당 머무는 시간."),
    ("term_rate", "average request rate", "평균 요청률"),
    ("term_peak_multiplier", "peak multiplier", "피크 배수"),
    ("plan_reason_does_not_fit", "does not fit in memory", "메모리에 들어가지 않음"),
    ("plan_reason_misses_ttft", "misses the TTFT target even at batch 1", "배치 1에서도 TTFT 목표를 넘음"),
    ("plan_reason_misses_tpot", "misses the TPOT target even at batch 1", "배치 1에서도 TPOT 목표를 넘음"),
    ("plan_reason_more_expensive", "meets the targets but costs more", "목표는 만족하지만 더 비쌈"),
    ("plan_reason_crosses_nodes", "the replica would cross nodes (≈ 50 GB/s): add replicas instead", "레플리카가 노드를 넘음(≈ 50 GB/s): 대신 레플리카를 늘리세요"),
    ("plan_reason_no_price", "meets the targets but has no price to compare", "목표는 만족하지만 비교할 가격이 없음"),
    ("load_storage_time", "Storage → host memory", "스토리지 → CPU 메모리"),
    ("load_host_to_gpu_time", "Host memory → GPU memory", "CPU 메모리 → GPU 메모리"),
    ("load_time", "Model load time", "모델 로딩 시간"),
    ("cold_start", "Cold start of a new replica", "새 레플리카의 콜드 스타트"),
    ("term_storage_bandwidth", "storage read bandwidth", "스토리지 읽기 대역폭"),
    ("term_readers", "replicas reading the same storage at once", "같은 스토리지를 동시에 읽는 레플리카 수"),
    ("term_weights_per_gpu", "weight bytes per GPU", "GPU당 가중치 바이트"),
    ("term_host_link", "host-to-GPU link, one direction", "호스트-GPU 링크(한 방향)"),
    ("term_link_efficiency", "host-link efficiency", "호스트 링크 효율"),
    ("term_engine_startup", "engine start-up (compile, CUDA graphs)", "엔진 시작 시간(컴파일, CUDA 그래프)"),
    ("term_kv_bytes_step", "KV-cache bytes read per step", "스텝당 읽는 KV 캐시 바이트"),
    ("offload_bandwidth_ratio", "GPU memory vs host link bandwidth", "GPU 메모리 대 호스트 링크 대역폭"),
    ("offload_weights_tpot", "Time per token with the weights in host memory", "가중치가 CPU 메모리에 있을 때 토큰당 시간"),
    ("offload_kv_tpot", "Time per token with the KV cache in host memory", "KV 캐시가 CPU 메모리에 있을 때 토큰당 시간"),
    ("storage_nvme", "Local NVMe SSD (PCIe Gen4), ≈ 7 GB/s", "로컬 NVMe SSD(PCIe Gen4), ≈ 7 GB/s"),
    ("storage_network", "Network volume at its maximum (EBS gp3 1,000 MiB/s)", "네트워크 볼륨 최대치(EBS gp3 1,000 MiB/s)"),
    ("storage_network_baseline", "Network volume at its baseline (EBS gp3 125 MiB/s)", "네트워크 볼륨 기본치(EBS gp3 125 MiB/s)"),
    ("storage_object", "Object storage, one loader (≈ 0.5 GB/s)", "오브젝트 스토리지, 로더 하나(≈ 0.5 GB/s)"),
    // Explanations beside each section (core::explain): templates with {placeholders}.
    ("explain_title_fit", "Why: capacity comes first", "왜 그런가: 먼저 용량"),
    ("explain_title_kv", "Why: the KV cache grows", "왜 그런가: KV 캐시는 자란다"),
    ("explain_title_batch", "Why: the memory left sets the batch", "왜 그런가: 남는 공간이 배치를 정한다"),
    ("explain_title_roofline", "Why: bandwidth or compute?", "왜 그런가: 대역폭인가, 연산인가"),
    ("explain_title_latency", "Why: decode is bandwidth-bound", "왜 그런가: decode는 대역폭에 묶인다"),
    ("explain_title_cost", "Why: compare the cost per request", "왜 그런가: 요청당 비용으로 비교한다"),
    ("explain_title_planner", "Why: plan for the peak", "왜 그런가: 피크에 맞춰 계획한다"),
    ("explain_no_gpu", "Choose at least one GPU to see the explanation with your numbers.", "GPU를 하나 이상 고르면 현재 숫자로 설명이 나온다."),
    ("explain_word_bandwidth_bound", "bandwidth-bound.", "대역폭에 묶인다."),
    ("explain_word_compute_bound", "compute-bound.", "연산에 묶인다."),
    ("explain_fit_capacity", "Capacity comes first, then bandwidth, then compute. The weights take {weights}, which leaves {left} of the {capacity} of the {gpu} for the KV cache and activations.", "용량 → 대역폭 → 연산 순으로 본다. 먼저 용량이다. 가중치가 {weights}를 차지하므로, {gpu}의 {capacity} 중 KV 캐시와 activation에 남는 것은 {left}다."),
    ("explain_fit_capacity_tp", "Capacity comes first, then bandwidth, then compute. The weights take {weights}, split over {tp} GPUs: {weights_gpu} on each {gpu}, which leaves {left} of its {capacity} for the KV cache and activations.", "용량 → 대역폭 → 연산 순으로 본다. 먼저 용량이다. 가중치 {weights}를 GPU {tp}장에 나누면 {gpu} 한 장에 {weights_gpu}이므로, {capacity} 중 KV 캐시와 activation에 남는 것은 {left}다."),
    ("explain_fit_fits", "{concurrency} requests of {context} tokens use {used} on the {gpu}: it fits, with {free} to spare.", "요청 {concurrency}개 × {context} 토큰이면 {gpu}에서 {used}를 쓴다. 들어가고 {free}가 남는다."),
    ("explain_fit_over", "{concurrency} requests of {context} tokens would need {used} on the {gpu}, {over} more than it has: it does not fit. Fewer or shorter requests, more GPUs or lower precision would.", "요청 {concurrency}개 × {context} 토큰이면 {gpu}에서 {used}가 필요해 {over}가 모자란다. 들어가지 않는다. 요청 수나 길이를 줄이거나, GPU를 늘리거나, 정밀도를 낮춰야 한다."),
    ("explain_fit_weights_over", "The weights alone need {weights_gpu} per GPU, more than the {capacity} of the {gpu}: nothing runs until the model is split over more GPUs or stored in lower precision.", "가중치만으로 GPU당 {weights_gpu}가 필요해 {gpu}의 {capacity}를 넘는다. GPU 여러 장에 나누거나 더 낮은 정밀도로 저장하기 전에는 실행되지 않는다."),
    ("explain_kv_size", "Every token keeps {kv_token} of keys and values across all layers, so one request of {context} tokens holds {kv_request} and {concurrency} requests hold {kv_total}: {ratio}× the weights ({weights}). Looking at the model size alone is not enough.", "토큰 하나가 모든 레이어에 걸쳐 {kv_token}의 K·V를 남긴다. 그래서 {context} 토큰 요청 하나는 {kv_request}, 요청 {concurrency}개는 {kv_total}를 차지한다. 가중치({weights})의 {ratio}배다. 모델 크기만 보면 안 되는 이유다."),
    ("explain_kv_grows", "The KV cache is not fixed at load time: it grows with every generated token, so what matters is the peak at the end of generation, not the idle state.", "KV 캐시는 로딩 시점에 고정되는 값이 아니다. 생성이 진행될수록 토큰이 쌓이면서 함께 커진다. 그래서 확인해야 할 지점은 유휴 상태가 아니라 생성이 끝나는 순간의 최대 사용량이다."),
    ("explain_kv_oom_after", "On the {gpu}, {concurrency} requests fill the memory when each reaches about {oom_tokens} tokens; past that point the server fails with OOM. At {context} tokens they still fit.", "{gpu}에서 요청 {concurrency}개는 각각 약 {oom_tokens} 토큰에 이르면 메모리를 다 채운다. 그 지점을 넘기면 OOM으로 떨어진다. {context} 토큰까지는 들어간다."),
    ("explain_kv_oom_before", "On the {gpu}, {concurrency} requests fill the memory when each reaches about {oom_tokens} tokens, before the {context} asked for: generation would end in OOM.", "{gpu}에서 요청 {concurrency}개는 각각 약 {oom_tokens} 토큰에서 메모리를 다 채운다. 요청한 {context} 토큰에 닿기 전이므로 생성 도중 OOM으로 떨어진다."),
    ("explain_batch_count", "The memory the weights leave decides the batch. After {weights_gpu} of weights, the {gpu} has room for {theoretical} requests of {kv_request} in theory and {practical} in practice, because activations (intermediate tensors) need room too.", "남는 공간이 배치 크기를 정한다. {gpu}에서 가중치 {weights_gpu}를 빼면, 요청당 {kv_request}로 이론상 {theoretical}개, 실제로는 {practical}개가 들어간다. 중간 단계에서 생기는 activation 텐서 몫을 남겨둬야 하기 때문이다."),
    ("explain_batch_intensity", "The batch in turn raises the arithmetic intensity: a weight read from memory serves every request in the batch, so at {batch} requests decode does about {batch_int} FLOP per byte instead of {decode_int}.", "그 배치 크기가 다시 연산 강도를 밀어 올린다. 메모리에서 한 번 읽은 가중치를 배치의 모든 요청이 함께 쓰므로, 요청 {batch}개면 decode의 연산 강도가 {decode_int}에서 약 {batch_int} FLOP/B로 오른다."),
    ("explain_roof_ridge", "The {gpu} computes {peak} TFLOP/s at {dtype} and moves {bw} GB/s, so its ridge point is about {ridge} FLOP per byte. Below it a workload is bandwidth-bound (the compute units wait for data); above it, compute-bound.", "{gpu}의 최대 성능은 {dtype} 기준 {peak} TFLOP/s, 메모리 대역폭은 {bw} GB/s다. 나누면 리지 포인트는 약 {ridge} FLOP/B다. 이보다 낮으면 대역폭에 묶여 연산 유닛이 놀고, 높으면 연산에 묶인다."),
    ("explain_roof_decode", "Decode makes one token at a time, so its matrices are really vectors: about {decode_int} FLOP per byte, far below {ridge}. It is bandwidth-bound however fast the chip computes.", "decode는 토큰을 하나씩 만들어 행렬이 사실상 벡터가 된다. 연산 강도는 약 {decode_int} FLOP/B로 {ridge}에 한참 못 미친다. FLOPS가 아무리 높아도 대역폭에 묶인다."),
    ("explain_roof_prefill", "Prefill handles the whole prompt at once: at {context} tokens and h = {hidden} a projection does {prefill_int} FLOP per byte, so it is {bound}", "prefill은 프롬프트 토큰을 한꺼번에 처리한다. {context} 토큰, h = {hidden}에서 projection의 연산 강도는 {prefill_int} FLOP/B이므로 {bound}"),
    ("explain_roof_no_peak", "No dense {dtype} peak is published for the {gpu}, so its ridge point is unknown; enter the figure as a custom accelerator to place it.", "{gpu}의 {dtype} 최대 성능이 공개되지 않아 리지 포인트를 알 수 없다. 사용자 정의 가속기로 값을 넣으면 계산된다."),
    ("explain_latency_decode", "Decode reads all {weights_read} of weights for every token; at {bw} GB/s that alone takes {t_ms} ms, so one request gets at most {tps} tokens/s on the {gpu}, whatever its FLOP/s.", "decode는 토큰 하나를 만들 때마다 가중치 {weights_read} 전체를 다시 읽는다. {bw} GB/s로 읽기만 해도 {t_ms} ms가 걸리므로, {gpu}에서 요청 하나는 FLOPS와 상관없이 초당 최대 {tps} 토큰이다."),
    ("explain_latency_cross", "The step stays bandwidth-bound until the batch reaches about {cross} requests, so up to there more requests add throughput almost for free.", "배치가 약 {cross}개에 이를 때까지는 대역폭에 묶여 있으므로, 그 전까지는 요청을 늘려도 토큰 하나의 시간은 거의 그대로이고 처리량만 는다."),
    ("explain_latency_batch", "With {batch} requests each step also reads their KV cache at full length: at least {step_ms} ms per step, at most {total_tps} tokens/s in all.", "요청 {batch}개면 스텝마다 각 요청의 KV 캐시도 읽는다(최대 길이 기준). 스텝당 최소 {step_ms} ms, 전체 처리량은 초당 최대 {total_tps} 토큰이다."),
    ("explain_latency_unknown", "Without the weight size or the bandwidth, the decode time cannot be bounded.", "가중치 크기나 대역폭을 몰라 decode 시간을 추정할 수 없다."),
    ("explain_cost_one", "The {gpu} costs ${price} per hour and holds {requests} requests at once: ${per_req} per request-hour.", "{gpu}의 가격은 시간당 ${price}이고 동시에 요청 {requests}개를 처리한다. 요청·시간당 ${per_req}다."),
    ("explain_cost_compare", "Compare per request, not per hour: the {a} costs {price_ratio}× as much per hour as the {b} but holds {req_ratio}× the requests, so each request costs {cost_ratio}× as much.", "시간당이 아니라 요청당으로 비교한다. {a}의 시간당 비용은 {b}의 {price_ratio}배지만 요청은 {req_ratio}배를 처리하므로, 요청당 비용은 {cost_ratio}배다."),
    ("explain_cost_no_price", "None of the chosen GPUs has a public hourly price, so the cost per request cannot be compared.", "고른 GPU 중 공개된 시간당 가격이 있는 것이 없어 요청당 비용을 비교할 수 없다."),
    ("explain_planner_little", "Little's law: requests in flight = arrival rate × the time each request stays.", "리틀의 법칙: 처리 중인 요청 수 = 도착률 × 요청 하나가 머무는 시간."),
    ("explain_planner_replicas", "One {gpu} replica of {tp} GPU(s) holds {requests} requests at a time, so {concurrency} requests in flight need {replicas} replica(s).", "{gpu} {tp}장으로 된 레플리카 하나가 동시에 요청 {requests}개를 담으므로, 처리 중인 요청 {concurrency}개에는 레플리카 {replicas}개가 필요하다."),
    ("explain_planner_cost", "{replicas} replica(s) cost ${cost_h} per hour.", "레플리카 {replicas}개의 비용은 시간당 ${cost_h}다."),
    ("explain_planner_no_fit", "Not one request fits on the {gpu}: add GPUs per replica or lower the precision before counting replicas.", "{gpu}에는 요청이 하나도 들어가지 않는다. 레플리카 수를 세기 전에 레플리카당 GPU를 늘리거나 정밀도를 낮춰야 한다."),
    ("explain_planner_peak", "Size for the peak, not the average: a fleet sized for the average runs out of KV memory when traffic spikes.", "평시가 아니라 피크에 맞춰 잡는다. 평균에 맞춘 구성은 트래픽이 몰리는 순간 KV 메모리가 바닥난다."),
    // Derivation terms used by core::report (shown in "Show the math").
    ("term_concurrency", "concurrent requests", "동시 요청 수"),
    ("term_context_len", "tokens per request (context length)", "요청당 토큰 수(컨텍스트 길이)"),
    ("term_requests", "concurrent requests per replica", "레플리카당 동시 요청 수"),
    ("term_kv_heads", "KV heads", "KV 헤드 수"),
    ("term_head_dim", "head dimension", "헤드 차원"),
    ("term_bytes_per_kv", "bytes per cached element", "캐시 원소당 바이트"),
    // Exports and accessibility (ui::export_bar, ui::explanation).
    ("export_title", "Export", "내보내기"),
    ("export_csv", "Download CSV", "CSV 내려받기"),
    ("export_json", "Download JSON", "JSON 내려받기"),
    ("export_print", "Print", "인쇄"),
    ("export_copy_failed", "Copying is not allowed here; select the address in the address bar and copy it.", "여기서는 복사할 수 없습니다. 주소 표시줄의 주소를 선택해 복사하세요."),
    ("export_nothing", "Nothing to export yet.", "아직 내보낼 결과가 없습니다."),
    // Analysis views (ui::roofline_view, matmul_explorer, perf_view, accuracy_view, planner_view).
    ("view_err_decimal", "Enter a number.", "숫자를 입력하세요."),
    ("view_unit_elements", "elements", "개"),
    ("view_unit_fraction", "(0–1)", "(0–1)"),
    ("view_unit_ms", "ms", "ms"),
    ("view_unit_rps", "requests/s", "요청/초"),
    ("view_unit_times", "×", "배"),
    ("view_unit_tokens", "tokens", "토큰"),
    ("view_unit_usd_per_gpu_hour", "US$ per GPU-hour", "GPU 시간당 달러"),
    ("view_roof_title", "Roofline: where prefill and decode sit", "루프라인: 프리필과 디코드의 위치"),
    ("view_roof_batch", "Batch (sequences decoded together)", "배치 (함께 디코드하는 시퀀스 수)"),
    ("view_roof_context", "Context per sequence", "시퀀스당 컨텍스트"),
    ("view_roof_ops", "Operators shown one by one", "하나씩 보여 줄 연산자"),
    ("view_roof_ops_none", "None (whole model only)", "없음 (모델 전체만)"),
    ("view_roof_ops_decode", "Decode step", "디코드 스텝"),
    ("view_roof_ops_prefill", "Prefill pass", "프리필 패스"),
    ("view_roof_decode_intensity", "Decode intensity", "디코드 연산 강도"),
    ("view_roof_prefill_intensity", "Prefill intensity", "프리필 연산 강도"),
    ("view_roof_explain", "At batch {batch}, a decode step does {decode} FLOP per byte it moves and prefill {prefill}; the ridge of the {gpu} (where the points are placed) is {ridge} FLOP/B. Left of the ridge the memory bandwidth limits the speed (decode reads every weight for one token per sequence); a larger batch reuses each weight for more tokens and moves decode towards the ridge, until the KV cache, read per sequence, dominates the bytes. Dashed trails start where each point was at batch 1.", "배치 {batch}에서 디코드 스텝은 옮기는 바이트당 {decode} FLOP, 프리필은 {prefill} FLOP을 계산합니다. 점들이 놓인 {gpu}의 리지 포인트는 {ridge} FLOP/B입니다. 리지 왼쪽에서는 메모리 대역폭이 속도를 제한합니다(디코드는 시퀀스마다 토큰 하나를 위해 모든 가중치를 읽음). 배치를 키우면 가중치 하나를 더 많은 토큰에 재사용해 디코드가 리지 쪽으로 이동하지만, 시퀀스마다 읽는 KV 캐시가 바이트의 대부분이 되면 멈춥니다. 점선은 각 점이 배치 1일 때의 위치에서 시작합니다."),
    ("view_roof_pick", "Show the math for a point (or click it on the chart)", "점의 계산 과정 보기 (차트에서 클릭해도 됩니다)"),
    ("view_roof_pick_none", "Choose a point…", "점을 고르세요…"),
    ("view_matmul_title", "Matmul explorer: arithmetic intensity", "행렬곱 탐색기: 연산 강도"),
    ("view_matmul_presets", "Textbook examples", "교재 예제"),
    ("view_matmul_m", "M (rows, tokens)", "M (행, 토큰)"),
    ("view_matmul_n", "N (columns)", "N (열)"),
    ("view_matmul_k", "K (shared dimension)", "K (공유 차원)"),
    ("view_matmul_intensity", "Intensity in half precision", "반정밀도 연산 강도"),
    ("view_matmul_point", "Matmul", "행렬곱"),
    ("view_matmul_compute_bound", "At or above the {gpu} ridge ({ridge} FLOP/B): this matmul is compute-bound.", "{gpu}의 리지 포인트({ridge} FLOP/B) 이상: 이 행렬곱은 연산에 묶입니다."),
    ("view_matmul_memory_bound", "Below the {gpu} ridge ({ridge} FLOP/B): this matmul is bandwidth-bound; a larger M (more tokens at once) raises its intensity.", "{gpu}의 리지 포인트({ridge} FLOP/B) 아래: 이 행렬곱은 대역폭에 묶입니다. M(한 번에 처리하는 토큰)을 키우면 연산 강도가 올라갑니다."),
    ("view_perf_title", "Speed and cost: the performance model", "속도와 비용: 성능 모델"),
    ("view_perf_workload", "Batch {batch}, {input} prompt tokens and {output} output tokens per request, {tp} GPU(s) per replica. Each operator costs max(FLOPs / (peak × compute efficiency), bytes / (bandwidth × bandwidth efficiency)), plus tensor-parallel all-reduces and a fixed overhead per step.", "배치 {batch}, 요청당 프롬프트 {input} 토큰과 출력 {output} 토큰, 레플리카당 GPU {tp}개. 연산자마다 max(FLOP / (최대 성능 × 연산 효율), 바이트 / (대역폭 × 대역폭 효율))에 텐서 병렬 all-reduce와 스텝당 고정 오버헤드를 더합니다."),
    ("view_perf_eff_title", "Efficiencies (editable; defaults fitted to measured benchmarks)", "효율 (수정 가능, 기본값은 실측 벤치마크에 맞춘 값)"),
    ("view_perf_eff_explain", "The model's only free parameters. The defaults minimise the median error on the training rows of the calibration set; see \"How accurate is this?\".", "모델의 유일한 자유 매개변수입니다. 기본값은 보정 데이터의 학습 행에서 오차 중앙값을 최소화합니다. \"얼마나 정확한가?\"를 보세요."),
    ("view_perf_eff_reset", "Back to the fitted defaults", "보정된 기본값으로"),
    ("view_eff_compute_prefill", "Compute efficiency, prefill", "연산 효율, 프리필"),
    ("view_eff_compute_decode", "Compute efficiency, decode", "연산 효율, 디코드"),
    ("view_eff_bandwidth", "Memory-bandwidth efficiency", "메모리 대역폭 효율"),
    ("view_eff_interconnect", "Interconnect efficiency (all-reduce)", "인터커넥트 효율 (all-reduce)"),
    ("view_eff_step_overhead", "Fixed time per decode step", "디코드 스텝당 고정 시간"),
    ("view_eff_prefill_overhead", "Fixed time per prefill", "프리필당 고정 시간"),
    ("view_eff_allreduce_latency", "Latency per all-reduce", "all-reduce당 지연"),
    ("view_perf_max_batch", "Largest batch for these prompt + output lengths (90 % of memory)", "이 프롬프트 + 출력 길이에서 가능한 최대 배치 (메모리의 90 %)"),
    ("view_perf_bound", "What limits each phase", "각 단계를 제한하는 것"),
    ("view_perf_bound_overhead", "Overhead-bound", "오버헤드 제한"),
    ("view_perf_batch_no_fit", "the batch does not fit", "배치가 들어가지 않음"),
    ("view_perf_range_note", "Small numbers under each time: the range measured results fell in around predictions like this one (10th–90th percentile of measured ÷ predicted on the calibration rows).", "각 시간 아래 작은 숫자: 이런 예측 주변에서 실측값이 들어온 범위입니다 (보정 행에서 실측 ÷ 예측의 10~90번째 백분위)."),
    ("view_perf_lower_bound", "lower bound: no published compute peak", "하한값: 공개된 연산 최대 성능 없음"),
    ("view_tp_title", "By tensor-parallel degree", "텐서 병렬 정도별"),
    ("view_tp_explain", "The same batch and lengths on 1, 2, 4 … GPUs per replica (every degree up to one server that splits the attention heads evenly). More GPUs each hold and read a smaller share of the weights, so more sequences fit and each decode step is shorter, until the all-reduces between them dominate; the cost counts every GPU of the replica.", "같은 배치와 길이를 레플리카당 GPU 1, 2, 4 …개로 실행합니다(어텐션 헤드를 고르게 나누는, 서버 한 대까지의 모든 정도). GPU가 많을수록 각 GPU가 담고 읽는 가중치 몫이 작아져 더 많은 시퀀스가 들어가고 디코드 스텝이 짧아지다가, GPU 사이의 all-reduce가 지배하면 멈춥니다. 비용은 레플리카의 모든 GPU를 셉니다."),
    ("view_tp_degree", "GPUs per replica (TP)", "레플리카당 GPU (TP)"),
    ("view_tp_chosen", "chosen", "선택됨"),
    ("view_tp_model_no_fit", "the weights do not fit at this degree", "이 정도에서는 가중치가 들어가지 않음"),
    ("view_perf_latency_title", "Latency against throughput as the batch grows", "배치가 커질 때 지연 시간과 처리량"),
    ("view_perf_latency_explain", "Each curve starts at batch 1 (top left) and ends where memory runs out. On the flat start, a larger batch buys a lot of total throughput for a little speed per user; where the curve turns down, each extra token of throughput costs every user speed.", "각 곡선은 배치 1(왼쪽 위)에서 시작해 메모리가 바닥나는 곳에서 끝납니다. 평평한 앞부분에서는 배치를 키우면 사용자당 속도를 조금만 잃고 전체 처리량을 크게 얻습니다. 곡선이 꺾여 내려가는 곳부터는 처리량을 늘릴 때마다 모든 사용자의 속도가 줄어듭니다."),
    ("view_cost_price", "Price per GPU-hour", "GPU 시간당 가격"),
    ("view_cost_batch", "Requests served at once (memory allows)", "동시에 처리하는 요청 (메모리 허용)"),
    ("view_cost_price_label", "Price", "가격"),
    ("view_cost_price_reset", "Use the catalog price", "카탈로그 가격 사용"),
    ("view_cost_per_request", "Cost per request", "요청당 비용"),
    ("view_cost_tokens_per_joule", "Output tokens per joule", "줄(J)당 출력 토큰"),
    ("view_cost_upper_bound", "at TDP: an upper-bound estimate of the energy", "TDP 기준: 에너지의 상한 추정"),
    ("view_cost_chart_title", "Cost per million output tokens", "출력 토큰 100만 개당 비용"),
    ("view_cost_explain", "Cost per million tokens = price × GPUs / (3,600 × output tokens/s) × 10^6, with each GPU serving as many requests at once as its memory allows for the chosen context: a GPU that holds more requests can be cheaper per token although it costs more per hour.", "토큰 100만 개당 비용 = 가격 × GPU 수 / (3,600 × 초당 출력 토큰) × 10^6 (GPU마다 선택한 컨텍스트에서 메모리가 허용하는 만큼의 요청을 동시에 처리). 시간당 더 비싼 GPU도 더 많은 요청을 담으면 토큰당 더 쌀 수 있습니다."),
    ("view_acc_title", "How accurate is this?", "얼마나 정확한가?"),
    ("view_acc_explain", "The performance model's predictions against measured results from public benchmark tables. Every third trustworthy row is held out of the fit: the held-out error is the honest number.", "공개 벤치마크 표의 실측값과 성능 모델의 예측을 비교합니다. 신뢰할 수 있는 행의 세 개 중 하나는 보정에서 빼 두었으며, 그 행들의 오차가 정직한 숫자입니다."),
    ("view_acc_metric", "Metric", "지표"),
    ("view_acc_train_n", "Fitted rows", "보정 행"),
    ("view_acc_test_n", "Held-out rows", "보류 행"),
    ("view_acc_median", "Median error", "오차 중앙값"),
    ("view_acc_p90", "90th percentile", "90번째 백분위"),
    ("view_acc_target", "Target (held out)", "목표 (보류 행)"),
    ("view_acc_meets", "met", "달성"),
    ("view_acc_misses", "missed", "미달"),
    ("view_acc_rows", "{total} rows in the calibration file; {skipped} could not be mapped to a model and GPU and are left out.", "보정 파일의 행 {total}개 중 {skipped}개는 모델과 GPU에 대응시킬 수 없어 제외했습니다."),
    ("view_acc_chart_title", "Predicted against measured", "예측 대 실측"),
    ("view_acc_measured", "Measured", "실측"),
    ("view_acc_predicted", "Predicted", "예측"),
    ("view_acc_train", "Fitted row", "보정 행"),
    ("view_acc_test", "Held-out row", "보류 행"),
    ("view_acc_exact", "Exact", "정확히 일치"),
    ("view_acc_band", "±25 %", "±25 %"),
    ("view_plan_title", "Capacity planner: GPUs and replicas for your traffic", "용량 계획: 트래픽에 필요한 GPU와 레플리카"),
    ("view_plan_explain", "For each compared GPU and tensor-parallel degree inside one node: the largest batch that meets both latency targets, requests per second per replica (Little's law), replicas for the average and the peak, and the cost. Replicas stay inside a node; traffic is served by adding replicas.", "비교하는 GPU와 한 노드 안의 텐서 병렬 정도마다: 두 지연 목표를 만족하는 가장 큰 배치, 레플리카당 초당 요청 수(리틀의 법칙), 평균과 피크에 필요한 레플리카 수, 비용을 구합니다. 레플리카는 한 노드 안에 두고 트래픽은 레플리카를 늘려 처리합니다."),
    ("view_plan_ttft_model", "Serving is continuous batching with chunked prefill: a new request's TTFT = the prefill of its own prompt + the decode step in flight; each step's TPOT = one decode step of the batch + its share (B / output tokens) of the prompts' prefill.", "서빙은 청크 프리필을 쓰는 연속 배칭으로 봅니다: 새 요청의 TTFT = 자기 프롬프트의 프리필 + 진행 중인 디코드 스텝, 스텝마다의 TPOT = 배치의 디코드 스텝 하나 + 프롬프트 프리필 중 그 스텝의 몫(B / 출력 토큰 수)."),
    ("view_plan_rate", "Average request rate", "평균 요청률"),
    ("view_plan_peak", "Peak multiplier", "피크 배수"),
    ("view_plan_ttft", "TTFT target", "TTFT 목표"),
    ("view_plan_tpot", "TPOT target", "TPOT 목표"),
    ("view_plan_input_len", "Prompt tokens per request", "요청당 프롬프트 토큰"),
    ("view_plan_output_len", "Output tokens per request", "요청당 출력 토큰"),
    ("view_plan_candidates", "Candidates: the GPUs compared above.", "후보: 위에서 비교하는 GPU들."),
    ("view_plan_left_out", "Left out (custom accelerators are not in the catalog):", "제외됨 (사용자 정의 가속기는 카탈로그에 없음):"),
    ("view_plan_batch", "Batch / memory limit", "배치 / 메모리 한도"),
    ("view_plan_replicas", "Replicas (average → peak)", "레플리카 (평균 → 피크)"),
    ("view_plan_gpus_peak", "GPUs at the peak", "피크 시 GPU 수"),
    ("view_plan_cost_month", "Per month (peak)", "월 비용 (피크)"),
    ("view_plan_reason", "Verdict", "판정"),
    ("view_plan_best", "best option", "최선의 선택"),
    ("view_plan_chart_title", "Cost against load", "부하에 따른 비용"),
    ("view_plan_load_axis", "Request rate (requests/s)", "요청률 (요청/초)"),
    ("view_plan_cost_axis", "US$ per hour", "시간당 달러"),
    ("view_plan_avg", "average", "평균"),
    ("view_plan_peak_marker", "peak", "피크"),
    ("view_plan_chart_explain", "Cost per hour steps up by one replica each time the load passes what the replicas serve; the cheapest line at the peak is the pick (the four cheapest options are drawn; the table lists all).", "부하가 레플리카들이 처리하는 양을 넘을 때마다 시간당 비용이 레플리카 하나만큼 올라갑니다. 피크에서 가장 싼 선이 선택입니다 (가장 싼 네 가지만 그리고, 표에는 모두 있습니다)."),
    ("view_plan_node", "GPUs per node", "노드당 GPU"),
    ("view_unit_gpus", "GPUs", "개"),
    ("view_plan_node_note", "Applies to every candidate; from each GPU's catalog entry until you edit it. A replica whose TP exceeds it would cross nodes.", "모든 후보에 적용됩니다. 고치기 전까지는 GPU마다 카탈로그 값을 씁니다. TP가 이 값을 넘는 레플리카는 노드를 넘게 됩니다."),
    ("view_plan_node_reset", "Use the catalog's", "카탈로그 값 사용"),
    ("plan_largest_title", "Largest model that meets the target", "목표를 만족하는 가장 큰 모델"),
    ("plan_largest_explain", "Every size of a model family planned on the same candidate GPUs, traffic and latency targets as above. A larger model of the same family usually answers better; tuned serving often lets it meet the same targets on the same hardware.", "한 모델 계열의 모든 크기를 위와 같은 후보 GPU, 트래픽, 지연 목표로 계획합니다. 같은 계열에서는 대체로 큰 모델이 더 나은 응답을 내며, 서빙을 다듬으면 같은 하드웨어에서 같은 목표를 만족하는 경우가 많습니다."),
    ("plan_largest_family", "Model family", "모델 계열"),
    ("plan_largest_model", "Model", "모델"),
    ("plan_largest_params", "Parameters (total / active)", "파라미터 (전체 / 활성)"),
    ("plan_largest_fits", "Fits in a node", "한 노드에 들어감"),
    ("plan_largest_meets", "Meets the targets", "목표 만족"),
    ("plan_largest_option", "Best option", "최선의 구성"),
    ("plan_largest_tokens", "Output tokens/s per replica", "레플리카당 초당 출력 토큰"),
    ("plan_largest_cost_mtok", "US$ per million output tokens (average)", "출력 토큰 백만 개당 달러 (평균)"),
    ("plan_largest_why", "Why not", "안 되는 이유"),
    ("plan_largest_yes", "yes", "예"),
    ("plan_largest_no", "no", "아니요"),
    ("plan_largest_pick", "largest that meets the targets", "목표를 만족하는 가장 큰 모델"),
    ("plan_largest_bigger", "{big}, {ratio}× the parameters of {small}, meets TTFT ≤ {ttft} ms and TPOT ≤ {tpot} ms on the same candidate GPUs: {big_opt} serves {big_rps} requests/s per replica at {big_cost} per million output tokens ({big_gpus} GPUs at the peak), against {small_opt} with {small}: {small_rps} requests/s at {small_cost} ({small_gpus} GPUs).", "{big}는 {small}의 {ratio}배 파라미터로도 같은 후보 GPU에서 TTFT ≤ {ttft} ms, TPOT ≤ {tpot} ms를 만족합니다: {big_opt}는 레플리카당 초당 {big_rps}건을 출력 토큰 백만 개당 {big_cost}에 처리하고(피크 시 GPU {big_gpus}개), {small}는 {small_opt}에서 초당 {small_rps}건, {small_cost}입니다(GPU {small_gpus}개)."),
    ("plan_largest_only", "Of the {family} sizes, only {big} meets TTFT ≤ {ttft} ms and TPOT ≤ {tpot} ms on these GPUs (best on {big_opt}); a larger size needs looser targets, faster GPUs or fewer bits per weight.", "{family} 크기 중에서 이 GPU들로 TTFT ≤ {ttft} ms, TPOT ≤ {tpot} ms를 만족하는 것은 {big}뿐입니다({big_opt}가 최선). 더 큰 크기에는 느슨한 목표, 더 빠른 GPU 또는 더 적은 가중치 비트가 필요합니다."),
    ("plan_largest_none", "No {family} size meets TTFT ≤ {ttft} ms and TPOT ≤ {tpot} ms on these GPUs; each row says why.", "이 GPU들로 TTFT ≤ {ttft} ms, TPOT ≤ {tpot} ms를 만족하는 {family} 크기는 없습니다. 각 행에 이유가 있습니다."),
    ("view_plan_load_title", "Loading a replica, and why weights stay on the GPU", "레플리카 로딩, 그리고 가중치를 GPU에 두는 이유"),
    ("view_plan_load_s", "Load time (s)", "로딩 시간 (초)"),
    ("view_plan_slowest", "Slowest stage", "가장 느린 단계"),
    ("view_plan_cold_s", "Cold start (s)", "콜드 스타트 (초)"),
    ("view_plan_tpot_gpu", "Time per token, all on the GPU", "모두 GPU에 있을 때 토큰당 시간"),
    ("view_plan_load_explain", "Load: storage (local NVMe) → host memory → GPU memory, as fast as the slowest stage; a cold start adds the engine's start-up. Offloading: if the weights or the KV cache crossed the host link on every decode step instead of streaming from GPU memory, each token would take this long.", "로딩: 스토리지(로컬 NVMe) → CPU 메모리 → GPU 메모리, 가장 느린 단계만큼 걸립니다. 콜드 스타트는 엔진 시작 시간을 더합니다. 오프로딩: 가중치나 KV 캐시가 GPU 메모리 대신 매 디코드 스텝마다 호스트 링크를 건넌다면 토큰 하나에 이만큼 걸립니다."),
    // Phrases inside error sentences (core::error::Phrase): fields, ranges, expectations,
    // why a key is needed, missing figures, overflowing quantities.
    ("rng_at_least_1", "at least 1", "1 이상"),
    ("exp_param_count", "a parameter count such as 7B, 70.6e9, 1.5T, 124M or 6738415616", "7B, 70.6e9, 1.5T, 124M, 6738415616 같은 파라미터 수"),
    ("rng_from_to", "from {lo} to {hi}", "{lo} 이상 {hi} 이하"),
    ("exp_whole_params", "a whole number of parameters", "정수 개의 파라미터"),
    ("ovf_layer_count", "layer count", "레이어 수"),
    ("exp_one_per_layer", "one entry per layer ({n})", "레이어마다 한 항목 ({n}개)"),
    ("why_count_experts", "count the experts of a mixture-of-experts model", "MoE 모델의 전문가 수를 세는"),
    ("exp_at_most_experts", "at most the {experts} experts", "전문가 수({experts}) 이하"),
    ("exp_bytes_positive", "a whole number of bytes greater than 0", "0보다 큰 정수 바이트 수"),
    ("exp_divisor_heads", "a divisor of the {heads} attention heads", "어텐션 헤드 수({heads})의 약수"),
    ("exp_quant_bits", "4, 8 or 16 bits (other widths are not modelled)", "4, 8, 16비트 중 하나 (다른 폭은 모델링하지 않음)"),
    ("ovf_expert_params", "expert parameters", "전문가 파라미터"),
    ("ovf_intermediate", "intermediate size", "중간 크기"),
    ("ovf_param_count", "parameter count", "파라미터 수"),
    ("ovf_norm_params", "norm parameters", "정규화 파라미터"),
    ("ovf_params", "parameters", "파라미터"),
    ("ovf_router_params", "router parameters", "라우터 파라미터"),
    ("ovf_inner", "inner size", "내부 크기"),
    ("ovf_embedding_params", "embedding parameters", "임베딩 파라미터"),
    ("ovf_mtp_params", "MTP parameters", "MTP 파라미터"),
    ("ovf_kv_projection", "KV projection", "KV 프로젝션"),
    ("ovf_kv_elements", "KV elements", "KV 원소 수"),
    ("ovf_weight_bits", "weight bits", "가중치 비트"),
    ("ovf_stored_params", "stored parameters", "저장된 파라미터"),
    ("ovf_state_bytes", "state bytes", "상태 바이트"),
    ("ovf_shared_expert", "shared expert size", "공유 전문가 크기"),
    ("ovf_scale_bits", "scale bits", "스케일 비트"),
    ("ovf_projection_params", "projection parameters", "프로젝션 파라미터"),
    ("ovf_position_embeddings", "position embeddings", "위치 임베딩"),
    ("ovf_kv_bytes", "KV bytes", "KV 바이트"),
    ("ovf_weight_bytes", "weight bytes", "가중치 바이트"),
    ("ovf_ssm_params", "SSM parameters", "SSM 파라미터"),
    ("ovf_attention_params", "attention parameters", "어텐션 파라미터"),
    ("ovf_mlp_params", "MLP parameters", "MLP 파라미터"),
    ("ovf_vision_params", "vision parameters", "비전 파라미터"),
    ("fnd_text", "the text \"{s}\"", "텍스트 \"{s}\""),
    ("fnd_bool", "the boolean {b}", "불리언 {b}"),
    ("fnd_list", "a list", "목록"),
    ("fnd_object", "an object", "객체"),
    ("fnd_nonstandard", "{token} (non-standard JSON)", "{token} (표준이 아닌 JSON)"),
    ("fnd_chars", "{n} characters", "{n}글자"),
    ("fnd_char", "the character '{c}'", "문자 '{c}'"),
    ("fnd_list_of", "a list of {n} entries", "항목 {n}개짜리 목록"),
    ("fnd_unknown_key", "an unknown key", "알 수 없는 키"),
    ("jsn_eof_list", "EOF while parsing a list", "목록이 끝나기 전에 입력이 끝났습니다"),
    ("jsn_eof_object", "EOF while parsing an object", "객체가 끝나기 전에 입력이 끝났습니다"),
    ("jsn_eof_string", "EOF while parsing a string", "문자열이 끝나기 전에 입력이 끝났습니다"),
    ("jsn_eof_value", "EOF while parsing a value", "값이 나오기 전에 입력이 끝났습니다"),
    ("jsn_expected_colon", "expected `:`", "`:`가 있어야 합니다"),
    ("jsn_expected_list_sep", "expected `,` or `]`", "`,` 또는 `]`가 있어야 합니다"),
    ("jsn_expected_object_sep", "expected `,` or `}`", "`,` 또는 `}`가 있어야 합니다"),
    ("jsn_expected_ident", "expected ident", "true, false, null 같은 이름이 있어야 합니다"),
    ("jsn_expected_value", "expected value", "값이 있어야 합니다"),
    ("jsn_expected_quote", "expected `\"`", "`\"`가 있어야 합니다"),
    ("jsn_invalid_escape", "invalid escape", "잘못된 이스케이프"),
    ("jsn_invalid_number", "invalid number", "잘못된 숫자"),
    ("jsn_number_range", "number out of range", "숫자가 범위를 벗어남"),
    ("jsn_invalid_unicode", "invalid unicode code point", "잘못된 유니코드 코드 포인트"),
    ("jsn_control_char", "control character (\\u0000-\\u001F) found while parsing a string", "문자열 안에 제어 문자(\\u0000-\\u001F)가 있습니다"),
    ("jsn_key_string", "key must be a string", "키는 문자열이어야 합니다"),
    ("jsn_lone_surrogate", "lone leading surrogate in hex escape", "16진 이스케이프에 짝 없는 앞 서로게이트가 있습니다"),
    ("jsn_trailing_comma", "trailing comma", "마지막 항목 뒤에 쉼표가 있습니다"),
    ("jsn_trailing_chars", "trailing characters", "JSON이 끝난 뒤에 문자가 더 있습니다"),
    ("jsn_hex_escape_end", "unexpected end of hex escape", "16진 이스케이프가 중간에 끝났습니다"),
    ("jsn_recursion", "recursion limit exceeded", "중첩이 너무 깊습니다"),
    ("wrn_sliding_without_window", "layer_types names sliding layers but no sliding_window is given; they were treated as full attention.", "layer_types에 슬라이딩 레이어가 있지만 sliding_window가 없어서 전체 어텐션으로 처리했습니다."),
    ("wrn_unknown_layer_type", "layer type \"{t}\" is not known; treated as full attention.", "레이어 종류 \"{t}\"는 알 수 없어 전체 어텐션으로 처리했습니다."),
    ("wrn_bits_not_modelled", "{key} = {bits} bits is not modelled; sized as {as} bits (an upper bound).", "{key} = {bits}비트는 모델링하지 않으므로 {as}비트로 계산했습니다 (상한)."),
    ("wrn_quant_method", "quantization_config method \"{m}\" is not modelled; weights were sized at the checkpoint dtype.", "quantization_config 방식 \"{m}\"은 모델링하지 않으므로 가중치를 체크포인트 dtype으로 계산했습니다."),
    ("wrn_index_no_total", "The index has no metadata.total_size, so the stored weight bytes are unknown; paste config.json for a full estimate.", "인덱스에 metadata.total_size가 없어 저장된 가중치 바이트를 알 수 없습니다. 전체 추정을 하려면 config.json을 붙여 넣으세요."),
    ("wrn_unknown_type_mla", "model_type \"{mt}\" is not one this calculator knows; it has kv_lora_rank, so it was read as a DeepSeek-style MLA model.", "model_type \"{mt}\"는 이 계산기가 모르는 종류입니다. kv_lora_rank가 있어 DeepSeek 방식의 MLA 모델로 읽었습니다."),
    ("wrn_unknown_type_generic", "model_type \"{mt}\" is not one this calculator knows; it was read as a generic Llama-style decoder (check the ledger).", "model_type \"{mt}\"는 이 계산기가 모르는 종류입니다. 일반적인 Llama 방식 디코더로 읽었습니다 (가정 기록을 확인하세요)."),
    ("wrn_vision_not_counted", "The vision tower (vision_config) is not counted: parameters and weights cover the language model only.", "비전 타워(vision_config)는 세지 않았습니다. 파라미터와 가중치는 언어 모델만 포함합니다."),
    ("wrn_stored_twice", "The checkpoint stores some matrices twice (tied lm_head, or MTP embedding and head copies): {distinct} distinct parameters, {stored} stored.", "체크포인트가 일부 행렬을 두 번 저장합니다 (묶인 lm_head, 또는 MTP의 임베딩과 헤드 복사본): 서로 다른 파라미터 {distinct}개, 저장된 파라미터 {stored}개."),
    ("wrn_unknown_dtype", "{k} = \"{shown}\" is not a precision this calculator knows; bf16 was assumed.", "{k} = \"{shown}\"은 이 계산기가 모르는 정밀도여서 bf16으로 가정했습니다."),
    ("wrn_mtp_layers", "The config declares {mtp} multi-token-prediction layer(s): {params} parameters counted in \"other\"; the main model alone has {main}. Serving engines load them only for speculative decoding.", "config에 다중 토큰 예측(MTP) 레이어가 {mtp}개 있습니다: 파라미터 {params}개를 \"other\"에 셉니다. 본 모델만은 {main}개입니다. 서빙 엔진은 추측 디코딩(speculative decoding)에만 이 레이어를 불러옵니다."),
    ("wrn_mla_bias", "attention_bias = true is not modelled for MLA; biases were not counted.", "MLA에서는 attention_bias = true를 모델링하지 않으므로 바이어스를 세지 않았습니다."),
    // The assumption ledger: why a default was applied, how a value was derived.
    ("ldg_bloom_uses_alibi_no_position_parameters", "BLOOM uses ALiBi: no position parameters", "BLOOM은 ALiBi를 써서 위치 파라미터가 없음"),
    ("ldg_bloom_4_x_hidden_size", "BLOOM: 4 × hidden_size", "BLOOM: 4 × hidden_size"),
    ("ldg_deepseek_default_no_attention_biases", "DeepSeek default: no attention biases", "DeepSeek 기본값: 어텐션 바이어스 없음"),
    ("ldg_falcon_default_multi_query_attention", "Falcon default: multi-query attention", "Falcon 기본값: 멀티 쿼리 어텐션"),
    ("ldg_falcon_default_no_linear_biases", "Falcon default: no linear biases", "Falcon 기본값: 선형층 바이어스 없음"),
    ("ldg_falcon_default_original_decoder", "Falcon default: original decoder", "Falcon 기본값: 원래 디코더 구조"),
    ("ldg_falcon_default_parallel_attention_and_mlp", "Falcon default: parallel attention and MLP", "Falcon 기본값: 어텐션과 MLP 병렬"),
    ("ldg_gpt_neox_default_attention_biases", "GPT-NeoX default: attention biases", "GPT-NeoX 기본값: 어텐션 바이어스 있음"),
    ("ldg_gemma_2_alternates_sliding_even_and_global", "Gemma-2 alternates sliding (even) and global (odd) layers", "Gemma-2는 슬라이딩(짝수)과 전역(홀수) 레이어를 번갈아 씀"),
    ("ldg_gemma_3_default_every_6th_layer_is", "Gemma-3 default: every 6th layer is global", "Gemma-3 기본값: 6번째 레이어마다 전역"),
    ("ldg_jamba_default_16_experts", "Jamba default: 16 experts", "Jamba 기본값: 전문가 16개"),
    ("ldg_jamba_default_2_active_experts", "Jamba default: 2 active experts", "Jamba 기본값: 활성 전문가 2개"),
    ("ldg_jamba_default_moe_every_2nd_layer", "Jamba default: MoE every 2nd layer", "Jamba 기본값: 2번째 레이어마다 MoE"),
    ("ldg_jamba_default_conv_bias", "Jamba default: conv bias", "Jamba 기본값: conv 바이어스 있음"),
    ("ldg_jamba_default_conv_kernel_4", "Jamba default: conv kernel 4", "Jamba 기본값: conv 커널 4"),
    ("ldg_jamba_default_expand_2", "Jamba default: expand 2", "Jamba 기본값: expand 2"),
    ("ldg_jamba_default_no_projection_biases", "Jamba default: no projection biases", "Jamba 기본값: 프로젝션 바이어스 없음"),
    ("ldg_jamba_default_offset_1", "Jamba default: offset 1", "Jamba 기본값: 오프셋 1"),
    ("ldg_jamba_default_offset_4", "Jamba default: offset 4", "Jamba 기본값: 오프셋 4"),
    ("ldg_jamba_default_one_attention_layer_in_8", "Jamba default: one attention layer in 8", "Jamba 기본값: 8개 레이어 중 하나가 어텐션"),
    ("ldg_jamba_default_state_size_16", "Jamba default: state size 16", "Jamba 기본값: 상태 크기 16"),
    ("ldg_llama_4_chunked_attention_rope_layers_attend", "Llama-4 chunked attention: RoPE layers attend within attention_chunk_size tokens", "Llama-4 청크 어텐션: RoPE 레이어는 attention_chunk_size 토큰 안에서만 어텐션함"),
    ("ldg_llama_4_default_every_4th_layer_has", "Llama-4 default: every 4th layer has no RoPE (global)", "Llama-4 기본값: 4번째 레이어마다 RoPE 없음 (전역)"),
    ("ldg_mamba_default_conv_bias", "Mamba default: conv bias", "Mamba 기본값: conv 바이어스 있음"),
    ("ldg_mamba_default_conv_kernel_4", "Mamba default: conv kernel 4", "Mamba 기본값: conv 커널 4"),
    ("ldg_mamba_default_expand_2", "Mamba default: expand 2", "Mamba 기본값: expand 2"),
    ("ldg_mamba_default_no_projection_biases", "Mamba default: no projection biases", "Mamba 기본값: 프로젝션 바이어스 없음"),
    ("ldg_mamba_default_state_size_16", "Mamba default: state size 16", "Mamba 기본값: 상태 크기 16"),
    ("ldg_mamba_has_no_attention_constant_recurrent_st", "Mamba has no attention: constant recurrent state per sequence instead", "Mamba는 어텐션이 없고, 대신 시퀀스마다 크기가 일정한 순환 상태를 가짐"),
    ("ldg_nemotron_h_default_8_groups", "Nemotron-H default: 8 groups", "Nemotron-H 기본값: 그룹 8개"),
    ("ldg_nemotron_h_default_conv_kernel_4", "Nemotron-H default: conv kernel 4", "Nemotron-H 기본값: conv 커널 4"),
    ("ldg_nemotron_h_default_state_size_128", "Nemotron-H default: state size 128", "Nemotron-H 기본값: 상태 크기 128"),
    ("ldg_opt_default_biased_projections", "OPT default: biased projections", "OPT 기본값: 프로젝션 바이어스 있음"),
    ("ldg_opt_default_final_layernorm_kept", "OPT default: final LayerNorm kept", "OPT 기본값: 마지막 LayerNorm 유지"),
    ("ldg_opt_default_pre_norm_with_a_final", "OPT default: pre-norm with a final LayerNorm", "OPT 기본값: 마지막 LayerNorm이 있는 pre-norm"),
    ("ldg_qwen_default_sliding_window_off", "Qwen default: sliding window off", "Qwen 기본값: 슬라이딩 윈도 꺼짐"),
    ("ldg_qwen2_attention_has_q_k_v_biases", "Qwen2 attention has q/k/v biases", "Qwen2 어텐션은 q/k/v 바이어스가 있음"),
    ("ldg_siglip_default_3_channels", "SigLIP default: 3 channels", "SigLIP 기본값: 채널 3개"),
    ("ldg_siglip_vision_tower_gemma_3_projector_counte", "SigLIP vision tower + Gemma-3 projector, counted in params.other (served with the model)", "SigLIP 비전 타워 + Gemma-3 프로젝터, params.other에 셈 (모델과 함께 서빙됨)"),
    ("ldg_auto_hidden_size_16", "\"auto\": ⌈hidden_size / 16⌉", "\"auto\": ⌈hidden_size / 16⌉"),
    ("ldg_a_safetensors_index_lists_tensors_not_the", "a safetensors index lists tensors, not the architecture: KV cache needs config.json", "safetensors 인덱스에는 텐서 목록만 있고 구조는 없음: KV 캐시 계산에는 config.json이 필요"),
    ("ldg_conv_bias", "conv bias", "conv 바이어스 있음"),
    ("ldg_default_no_mlp_biases", "default: no MLP biases", "기본값: MLP 바이어스 없음"),
    ("ldg_default_no_attention_biases", "default: no attention biases", "기본값: 어텐션 바이어스 없음"),
    ("ldg_entries_in_weight_map", "entries in weight_map", "weight_map의 항목 수"),
    ("ldg_every_layer_is_moe", "every layer is MoE", "모든 레이어가 MoE"),
    ("ldg_expand_x_hidden_size", "expand × hidden_size", "expand × hidden_size"),
    ("ldg_gpt_oss_default_attention_biases", "gpt-oss default: attention biases", "gpt-oss 기본값: 어텐션 바이어스 있음"),
    ("ldg_hidden_size_num_attention_heads_no_head", "hidden_size / num_attention_heads (no head_dim key)", "hidden_size / num_attention_heads (head_dim 키 없음)"),
    ("ldg_input_and_post_attention_rmsnorm", "input and post-attention RMSNorm", "입력 RMSNorm과 어텐션 뒤 RMSNorm"),
    ("ldg_multi_query_true_one_shared_kv_head", "multi_query = true: one shared KV head", "multi_query = true: 공유 KV 헤드 1개"),
    ("ldg_n_inner_is_null_4_x_n", "n_inner is null: 4 × n_embd", "n_inner가 null: 4 × n_embd"),
    ("ldg_new_decoder_architecture_ln_attn_and_ln", "new decoder architecture: ln_attn and ln_mlp", "새 디코더 구조: ln_attn과 ln_mlp"),
    ("ldg_no_mlp_biases", "no MLP biases", "MLP 바이어스 없음"),
    ("ldg_no_mamba_projection_biases", "no Mamba projection biases", "Mamba 프로젝션 바이어스 없음"),
    ("ldg_no_attention_biases", "no attention biases", "어텐션 바이어스 없음"),
    ("ldg_no_dt_rank_hidden_size_16", "no dt rank: ⌈hidden_size / 16⌉", "dt rank 없음: ⌈hidden_size / 16⌉"),
    ("ldg_no_ffn_dim_4_x_hidden_size", "no ffn_dim: 4 × hidden_size", "ffn_dim 없음: 4 × hidden_size"),
    ("ldg_no_ffn_hidden_size_4_x_hidden", "no ffn_hidden_size: 4 × hidden_size", "ffn_hidden_size 없음: 4 × hidden_size"),
    ("ldg_no_first_k_dense_replace_every_layer", "no first_k_dense_replace: every layer is MoE", "first_k_dense_replace 없음: 모든 레이어가 MoE"),
    ("ldg_no_intermediate_size_4_x_hidden_size", "no intermediate_size: 4 × hidden_size", "intermediate_size 없음: 4 × hidden_size"),
    ("ldg_no_intermediate_size_mlp_4_x_hidden", "no intermediate_size_mlp: 4 × hidden", "intermediate_size_mlp 없음: 4 × hidden"),
    ("ldg_no_max_window_layers_every_layer_slides", "no max_window_layers: every layer slides", "max_window_layers 없음: 모든 레이어가 슬라이딩"),
    ("ldg_no_model_type_read_as_a_generic", "no model_type: read as a generic decoder", "model_type 없음: 일반 디코더로 읽음"),
    ("ldg_no_moe_layer_freq_every_layer_after", "no moe_layer_freq: every layer after the dense ones is MoE", "moe_layer_freq 없음: 밀집 레이어 다음의 모든 레이어가 MoE"),
    ("ldg_no_n_routed_experts_dense_model", "no n_routed_experts: dense model", "n_routed_experts 없음: 밀집 모델"),
    ("ldg_no_n_shared_experts_none", "no n_shared_experts: none", "n_shared_experts 없음: 공유 전문가 없음"),
    ("ldg_no_num_key_value_heads_equal_to", "no num_key_value_heads: equal to heads", "num_key_value_heads 없음: 헤드 수와 같음"),
    ("ldg_no_num_key_value_heads_multi_head", "no num_key_value_heads: multi-head attention (kv heads = attention heads)", "num_key_value_heads 없음: 멀티 헤드 어텐션 (KV 헤드 = 어텐션 헤드)"),
    ("ldg_no_num_kv_heads_equal_to_heads", "no num_kv_heads: equal to heads", "num_kv_heads 없음: 헤드 수와 같음"),
    ("ldg_no_num_nextn_predict_layers_no_multi", "no num_nextn_predict_layers: no multi-token-prediction layer", "num_nextn_predict_layers 없음: 다중 토큰 예측 레이어 없음"),
    ("ldg_no_shared_expert", "no shared expert", "공유 전문가 없음"),
    ("ldg_no_torch_dtype_dtype_assumed_bf16_the", "no torch_dtype/dtype: assumed bf16, the usual checkpoint precision", "torch_dtype/dtype 없음: 흔한 체크포인트 정밀도인 bf16으로 가정"),
    ("ldg_no_torch_dtype_gpt_2_checkpoints_are", "no torch_dtype: GPT-2 checkpoints are stored in float32", "torch_dtype 없음: GPT-2 체크포인트는 float32로 저장됨"),
    ("ldg_no_vocab_size_the_gemma_3_text", "no vocab_size: the Gemma-3 text default (262,208)", "vocab_size 없음: Gemma-3 텍스트 기본값 (262,208)"),
    ("ldg_no_word_embed_proj_dim_equal_to", "no word_embed_proj_dim: equal to hidden_size", "word_embed_proj_dim 없음: hidden_size와 같음"),
    ("ldg_num_nextn_predict_layers_multi_token_predict", "num_nextn_predict_layers: multi-token-prediction layers, in params.other (embedding and head shared with the main model)", "num_nextn_predict_layers: 다중 토큰 예측 레이어, params.other에 셈 (임베딩과 헤드는 본 모델과 공유)"),
    ("ldg_q_lora_rank_is_null_queries_are", "q_lora_rank is null: queries are not compressed (q_proj)", "q_lora_rank가 null: 쿼리를 압축하지 않음 (q_proj)"),
    ("ldg_q_norm_and_k_norm_rmsnorm_weights", "q_norm and k_norm RMSNorm weights of head_dim each", "각각 head_dim 크기의 q_norm, k_norm RMSNorm 가중치"),
    ("ldg_sliding_window_applies_to_every_layer_mistra", "sliding_window applies to every layer (Mistral-style)", "sliding_window가 모든 레이어에 적용됨 (Mistral 방식)"),
    ("ldg_the_checkpoint_stores_some_matrices_twice_a", "the checkpoint stores some matrices twice (a tied lm_head saved again, or the MTP layer's own embedding and head copies)", "체크포인트가 일부 행렬을 두 번 저장함 (묶인 lm_head를 다시 저장하거나, MTP 레이어의 임베딩·헤드 복사본)"),
    ("ldg_the_config_nests_its_language_model_under", "the config nests its language model under text_config; vision/audio towers are not counted", "config가 언어 모델을 text_config 아래에 둠; 비전/오디오 타워는 세지 않음"),
    ("ldg_the_config_s_dtype_is_not_a", "the config's dtype is not a known precision: assumed bf16", "config의 dtype이 알려진 정밀도가 아님: bf16으로 가정"),
    ("ldg_tied_to_the_embeddings_counted_once", "tied to the embeddings: counted once", "임베딩과 묶여 있어 한 번만 셈"),
    ("ldg_topk_method_noaux_tc_one_routing_bias", "topk_method noaux_tc: one routing bias per expert per MoE layer", "topk_method noaux_tc: MoE 레이어마다 전문가당 라우팅 바이어스 1개"),
    ("ldg_total_minus_the_routed_experts_a_token", "total minus the routed experts a token does not select (top-k of n per MoE layer)", "전체에서 토큰이 고르지 않는 라우팅 전문가를 뺀 값 (MoE 레이어마다 n개 중 top-k)"),
    ("ldg_word_embed_proj_dim_differs_from_hidden", "word_embed_proj_dim differs from hidden_size: project_in and project_out (in other)", "word_embed_proj_dim이 hidden_size와 다름: project_in과 project_out (other에 포함)"),
    ("ldg_quick_mode_has_no_architecture_paste_config", "quick mode has no architecture: paste config.json to size the KV cache", "빠른 모드에는 구조 정보가 없음: KV 캐시를 계산하려면 config.json을 붙여 넣으세요"),
    ("ldg_quick_mode_every_parameter_is_treated_as", "quick mode: every parameter is treated as quantizable", "빠른 모드: 모든 파라미터를 양자화 대상으로 취급"),
    ("ldg_tie_default", "no tie_word_embeddings: {fam} ties lm_head to the embeddings by default", "tie_word_embeddings 없음: {fam}는 기본적으로 lm_head를 임베딩과 묶음"),
    ("ldg_untied_default", "no tie_word_embeddings: {fam} has a separate lm_head by default", "tie_word_embeddings 없음: {fam}는 기본적으로 lm_head가 따로 있음"),
    ("ldg_gemma_pre_post_norms", "Gemma-2/3: pre/post attention and pre/post feed-forward norms", "Gemma-2/3: 어텐션 앞뒤와 피드포워드 앞뒤의 정규화"),
    ("term_kv_layers", "layers with a KV cache", "KV 캐시가 있는 레이어 수"),
    ("ldg_layers_with_kv", "attention layers (the others keep no KV cache)", "어텐션 레이어 (나머지는 KV 캐시가 없음)"),
    ("ldg_routed_expert_matrices", "routed expert matrices", "라우팅 전문가 행렬"),
    ("ldg_decoder_linear_matrices", "decoder linear matrices", "디코더 선형 행렬"),
    ("ovf_state_elements", "state elements", "상태 원소 수"),
    ("rng_whole_from_to", "a whole number from {lo} to {hi}", "{lo} 이상 {hi} 이하의 정수"),
    ("exp_true_false", "true or false", "true 또는 false"),
    ("exp_list_whole", "a list of whole numbers", "정수 목록"),
    ("exp_list_texts", "a list of texts", "문자열 목록"),
    ("why_size_mlp_blocks", "size the MLP blocks", "MLP 블록 크기를 정하는"),
    ("why_size_mamba2", "size the Mamba-2 mixers", "Mamba-2 믹서 크기를 정하는"),
    ("why_size_mlp", "size the MLP", "MLP 크기를 정하는"),
    ("why_size_mla_latent", "size the MLA latent cache", "MLA 잠재 캐시 크기를 정하는"),
    ("why_size_mla_heads", "size the MLA heads", "MLA 헤드 크기를 정하는"),
    ("why_size_mla_value_heads", "size the MLA value heads", "MLA 값 헤드 크기를 정하는"),
    ("why_size_model", "size the model", "모델 크기를 정하는"),
    ("why_size_embeddings", "size the embeddings", "임베딩 크기를 정하는"),
    ("why_size_attention", "size the attention", "어텐션 크기를 정하는"),
    ("why_size_vision", "size the vision tower", "비전 타워 크기를 정하는"),
    ("why_size_experts", "size the experts", "전문가 크기를 정하는"),
    ("why_size_pos_emb", "size the learned position embeddings", "학습된 위치 임베딩 크기를 정하는"),
    ("why_size_dense", "size the dense layers", "밀집 레이어 크기를 정하는"),
    ("why_count_layers", "count the layers", "레이어 수를 세는"),
    ("why_count_active_experts", "count the active experts", "활성 전문가 수를 세는"),
    ("why_time_model", "time the model", "모델의 실행 시간을 계산하는"),
    ("why_layer_kinds", "know which layers are Mamba, attention or MLP", "어느 레이어가 Mamba, 어텐션, MLP인지 아는"),
    ("why_custom_accel", "define a custom accelerator", "사용자 정의 가속기를 정의하는"),
    ("why_roofline_ops", "place the model's operators on the roofline", "모델의 연산을 루프라인 위에 놓는"),
    ("why_calibrate", "calibrate", "보정하는"),
    ("exp_one_char_per_layer", "one character per layer ({n})", "레이어마다 한 글자 ({n}개)"),
    ("exp_hybrid_chars", "M (Mamba-2), * (attention) or - (MLP)", "M (Mamba-2), * (어텐션), - (MLP) 중 하나"),
    ("rng_fraction", "a fraction above 0 and at most 1", "0 초과 1 이하의 비율"),
    ("rng_seconds_from_to", "from {lo} to {hi} seconds", "{lo}초 이상 {hi}초 이하"),
    ("what_mem_bw", "memory bandwidth", "메모리 대역폭"),
    ("what_link_bw", "GPU-to-GPU link bandwidth (needed for tensor parallelism)", "GPU 간 링크 대역폭 (텐서 병렬에 필요)"),
    ("rng_below", "below {n}", "{n} 미만"),
    ("rng_whole_at_least_1", "a whole number of at least 1", "1 이상의 정수"),
    ("exp_builtin_preset", "one of the built-in presets", "내장 프리셋 중 하나"),
    ("rng_kv_divisor", "a divisor or a multiple of the {kv} key/value heads, so each GPU holds whole heads", "KV 헤드 수({kv})의 약수 또는 배수 (GPU마다 헤드를 온전히 갖도록)"),
    ("rng_positive", "a positive number", "양수"),
    ("rng_number_above0_at_most1", "a number above 0 and at most 1", "0 초과 1 이하의 수"),
    ("fld_storage_bw", "storage bandwidth (GB/s)", "스토리지 대역폭 (GB/s)"),
    ("rng_above0_at_most", "above 0 and at most {max}", "0 초과 {max} 이하"),
    ("fld_host_link", "host link (GB/s)", "호스트 링크 (GB/s)"),
    ("fld_link_eff", "link efficiency", "링크 효율"),
    ("fld_engine_startup", "engine start-up (s)", "엔진 시작 시간 (초)"),
    ("what_host_link", "host link (PCIe generation or NVLink-C2C)", "호스트 링크 (PCIe 세대 또는 NVLink-C2C)"),
    ("rng_above0", "above 0", "0 초과"),
    ("rng_number_from_to_unit", "a number from {lo} to {hi} {unit}", "{lo} 이상 {hi} 이하의 수 ({unit})"),
    ("exp_one_of", "one of {list}", "{list} 중 하나"),
    ("exp_a_number", "a number", "수"),
    ("exp_pct_text", "percent-encoded UTF-8 text", "퍼센트 인코딩된 UTF-8 텍스트"),
    ("fld_avg_rate", "average request rate (req/s)", "평균 요청률 (요청/초)"),
    ("fld_peak_mult", "peak multiplier", "피크 배수"),
    ("rng_peak_mult", "from 1 to 1,000 (×4 = a 400% peak)", "1 이상 1,000 이하 (×4 = 평균의 400% 피크)"),
    ("fld_buckets", "length buckets", "길이 구간"),
    ("fld_input_len", "input length", "입력 길이"),
    ("fld_output_len", "output length", "출력 길이"),
    ("rng_tokens_from_to", "a whole number of tokens from {lo} to {hi}", "{lo} 이상 {hi} 이하의 토큰 수(정수)"),
    ("fld_bucket_share", "bucket share", "구간 비율"),
    ("fld_share_sum", "sum of bucket shares", "구간 비율의 합"),
    ("rng_share_sum", "1 (the shares of all requests)", "1 (모든 요청의 비율)"),
    ("fld_ttft_target", "TTFT target (ms)", "TTFT 목표 (ms)"),
    ("fld_tpot_target", "TPOT target (ms)", "TPOT 목표 (ms)"),
    ("fld_candidates", "candidate GPUs", "후보 GPU"),
    ("rng_one_accel", "at least one accelerator", "가속기 1개 이상"),
    ("fld_gpus_per_node", "GPUs per node of {gpu}", "{gpu}의 노드당 GPU 수"),
    ("fld_price", "price of {gpu} ($/GPU-hour)", "{gpu} 가격 ($/GPU-시간)"),
    ("exp_compiled_preset", "a compiled-in preset", "내장 프리셋"),
    ("phr_needs_tp", "{gpu} needs TP {tp}", "{gpu}는 TP {tp} 필요"),
    ("phr_no_candidate_holds", "no candidate can hold the weights", "어떤 후보도 가중치를 담지 못함"),
    ("phr_usd_per_hour", "USD per hour", "시간당 USD"),
    ("phr_plan_spans_nodes", "A replica on {gpu} × TP {tp} spans {nodes} nodes of {gpn} GPUs: tensor-parallel traffic would leave the node (≈ 50 GB/s instead of the in-node link); keep replicas inside one node.", "{gpu} × TP {tp} 레플리카는 GPU {gpn}개짜리 노드 {nodes}개에 걸칩니다. 텐서 병렬 통신이 노드 밖으로 나갑니다(노드 안 링크 대신 약 50 GB/s). 레플리카는 한 노드 안에 두세요."),
    ("phr_plan_does_not_fit", "The weights (plus one sequence's KV cache) do not fit in {gpu} × TP {tp}.", "가중치(와 시퀀스 하나의 KV 캐시)가 {gpu} × TP {tp}에 들어가지 않습니다."),
    ("phr_plan_at_batch_one", "At batch 1: TTFT {ttft} ms (target {ttft_target} ms), TPOT {tpot} ms (target {tpot_target} ms).", "배치 1에서 TTFT {ttft} ms (목표 {ttft_target} ms), TPOT {tpot} ms (목표 {tpot_target} ms)."),
    ("phr_plan_tp_skipped", "TP {tp} skipped on {gpu}: {why}", "{gpu}의 TP {tp} 제외: {why}"),
    ("phr_plan_option_skipped", "{gpu} × TP {tp} skipped: {why}", "{gpu} × TP {tp} 제외: {why}"),
    ("phr_plan_cold_start", "One more replica of the best option takes about {s} s to come up (load from local NVMe + engine start-up): provision the peak ahead of the surge, or keep warm replicas.", "최선의 선택으로 레플리카를 하나 더 띄우는 데 약 {s}초가 걸립니다(로컬 NVMe에서 로드 + 엔진 시작). 급증에 앞서 피크만큼 미리 띄우거나 예비 레플리카를 켜 두세요."),
    // --- weights per GPU under tensor parallelism (one rule) ---
    ("term_params_sharded", "Parameters split across the GPUs", "GPU들에 나뉘는 파라미터"),
    ("term_kv_heads_replicated", "Extra K/V parameters per GPU (a whole KV head when there are fewer KV heads than GPUs)", "GPU당 추가 K/V 파라미터 (KV 헤드가 GPU보다 적을 때 헤드 하나 전체)"),
    ("term_mla_down_projections", "MLA down-projections and their norms (replicated)", "MLA 하향 투영과 그 정규화 (복제)"),
    ("term_weights_class", "Weights by the per-class rule", "부분별 규칙에 따른 가중치"),
    ("term_weights_class_gpu", "Weights per GPU by the per-class rule", "부분별 규칙에 따른 GPU당 가중치"),
    ("ldg_tp_sharded_parts", "attention heads, MLP, experts, SSM projections, embeddings, lm_head", "어텐션 헤드, MLP, 전문가, SSM 투영, 임베딩, lm_head"),
    ("ldg_tp_replicated_parts", "norms, routers, position embeddings, MLA down-projections and their norms", "정규화, 라우터, 위치 임베딩, MLA 하향 투영과 그 정규화"),
    ("ldg_tp_kv_heads_replicated", "one K and V head per GPU when TP exceeds the KV heads", "TP가 KV 헤드 수보다 클 때 GPU마다 K·V 헤드 하나"),
    ("ldg_tp_mla_replicated", "q_a_proj, kv_a_proj_with_mqa, q_a_layernorm, kv_a_layernorm (vLLM ReplicatedLinear)", "q_a_proj, kv_a_proj_with_mqa, q_a_layernorm, kv_a_layernorm (vLLM ReplicatedLinear)"),
    ("note_tp_index_residual", "The safetensors index's exact size exceeds (or falls short of) the per-class total by scales and tensors the config does not describe; that difference is split evenly across the GPUs.", "safetensors 인덱스의 정확한 크기와 부분별 합계의 차이(스케일, config에 없는 텐서)는 GPU들에 고르게 나눕니다."),
    // --- capacity planner: lower-bound latencies ---
    ("phr_plan_lower_bound", "{gpu} publishes no dense {dtype} peak, so compute is not timed: TTFT and TPOT here are lower bounds (prefill timed on bytes alone), and meeting the targets is not established.", "{gpu}는 {dtype}의 dense 최대 성능을 공개하지 않아 연산 시간을 넣지 못했습니다. 여기의 TTFT와 TPOT은 하한값(프리필을 바이트만으로 계산)이며, 목표를 만족하는지는 확인되지 않았습니다."),
    ("phr_plan_best_lower_bound", "No option timed in full meets the targets: the best, {gpu} × TP {tp}, meets them only on lower-bound times (no published compute peak). Measure it, or enter a custom accelerator with a peak, before relying on it.", "연산 시간까지 계산된 선택지 중 목표를 만족하는 것이 없습니다. 최선인 {gpu} × TP {tp}도 하한값 기준으로만 목표를 만족합니다(공개된 연산 최대 성능 없음). 믿기 전에 실측하거나 최대 성능을 넣은 사용자 정의 가속기로 계산하세요."),
    ("plan_reason_latency_lower_bound", "meets the targets only on lower-bound times (no published compute peak)", "하한값 기준으로만 목표를 만족함(공개된 연산 최대 성능 없음)"),
    ("view_plan_lower_bound", "lower bound: no published compute peak", "하한값: 공개된 연산 최대 성능 없음"),
    // --- serving simulator (issue 17) ---
    ("rng_sim_rate", "a number of requests per second above 0 (or inf for all at once)", "0보다 큰 초당 요청 수 (모두 한꺼번에 보내려면 inf)"),
    ("rng_sim_prefix_hit", "a share from 0 up to (not including) 1", "0 이상 1 미만의 비율"),
    ("rng_sim_context", "at most {max} tokens (max_model_len {len} and the KV cache of this GPU)", "최대 {max} 토큰 (max_model_len {len}과 이 GPU의 KV 캐시 한도)"),
    ("exp_sim_range_order", "ranges whose lowest value is not above the highest", "최솟값이 최댓값보다 크지 않은 범위"),
    ("exp_sim_same_ops", "the same attention operators at every context length", "모든 컨텍스트 길이에서 같은 어텐션 연산자"),
    ("exp_sim_kv_blocks", "at least one KV block: the weights leave no memory for the KV cache; lower the precision, raise gpu_memory_utilization or use more GPUs", "KV 블록 1개 이상: 가중치가 KV 캐시 메모리를 남기지 않습니다. 정밀도를 낮추거나 gpu_memory_utilization을 올리거나 GPU를 늘리세요"),
    ("why_sim_max_model_len", "know the longest request (give max_model_len)", "가장 긴 요청 길이를 알기 위해 (max_model_len을 입력하세요)"),
    ("sim_note_capped", "{asked} requests asked for; the simulation runs the first {cap}.", "요청 {asked}개가 지정되었지만 시뮬레이션은 처음 {cap}개만 실행합니다."),
    ("exp_sim_bench_format", "the text summary that vllm bench serve (or benchmark_serving.py) prints, from \"Serving Benchmark Result\" to its last line, or its JSON result file (--save-result)", "vllm bench serve(또는 benchmark_serving.py)가 출력하는 텍스트 요약(\"Serving Benchmark Result\"부터 마지막 줄까지) 또는 JSON 결과 파일(--save-result)"),
    ("sim_note_partial", "The simulation stopped after {steps} engine steps (its time budget): the statistics cover only the requests finished so far.", "시뮬레이션이 엔진 스텝 {steps}회에서 멈췄습니다(시간 예산). 통계는 지금까지 끝난 요청만 포함합니다."),
    // --- hub fetch (issue 16, part 5) ---
    ("phr_hub_bad_id", "\"{given}\" is not a Hugging Face model id: write ORG/NAME with letters, digits, '-', '_' or '.', such as meta-llama/Llama-3.1-8B.", "\"{given}\"은(는) Hugging Face 모델 ID가 아닙니다. meta-llama/Llama-3.1-8B처럼 ORG/NAME 형식으로, 영문자·숫자·'-'·'_'·'.'만 써서 입력하세요."),
    ("phr_hub_other_host", "\"{given}\" points to another site: only huggingface.co is fetched; type the model id ORG/NAME.", "\"{given}\"은(는) 다른 사이트를 가리킵니다. huggingface.co에서만 가져오므로 모델 ID를 ORG/NAME 형식으로 입력하세요."),
    ("phr_hub_bad_endpoint", "HF_ENDPOINT is \"{given}\", but it must be an http:// or https:// address (unset it to use huggingface.co).", "HF_ENDPOINT가 \"{given}\"인데, http:// 또는 https:// 주소여야 합니다(huggingface.co를 쓰려면 비워 두세요)."),
    ("phr_hub_gated", "{id} is gated or private: huggingface.co gives its files only to signed-in users who accepted its licence. Accept the licence on the model page, download config.json there and paste it.", "{id}은(는) 접근이 제한된(gated) 모델이거나 비공개 모델입니다. huggingface.co는 라이선스에 동의하고 로그인한 사용자에게만 파일을 줍니다. 모델 페이지에서 라이선스에 동의한 뒤 config.json을 내려받아 붙여 넣으세요."),
    ("phr_hub_missing", "huggingface.co has no {file} for {id}: check the model id (ORG/NAME, as in the model page's address).", "huggingface.co에 {id}의 {file}이(가) 없습니다. 모델 ID(모델 페이지 주소의 ORG/NAME)를 확인하세요."),
    ("phr_hub_status", "huggingface.co answered HTTP {code} for {file}: try again later, or paste the config instead.", "huggingface.co가 {file} 요청에 HTTP {code}로 응답했습니다. 나중에 다시 시도하거나 config를 직접 붙여 넣으세요."),
    ("phr_hub_offline", "huggingface.co could not be reached{detail}: check the connection (or a firewall), or paste the config instead.", "huggingface.co에 연결할 수 없습니다{detail}. 네트워크(또는 방화벽)를 확인하거나 config를 직접 붙여 넣으세요."),
    ("phr_hub_timeout", "huggingface.co did not answer within {s} s: try again, or paste the config instead.", "huggingface.co가 {s}초 안에 응답하지 않았습니다. 다시 시도하거나 config를 직접 붙여 넣으세요."),
    ("phr_hub_too_large", "The answer for {file} is larger than {limit} bytes, more than such a file ever is, so it was not read; paste the config instead.", "{file} 응답이 {limit}바이트보다 커서 읽지 않았습니다(그런 파일이 가질 크기를 넘습니다). config를 직접 붙여 넣으세요."),
    ("phr_hub_malformed", "The answer for {file} is not what it should be: {detail}", "{file} 응답이 올바르지 않습니다: {detail}"),
    ("phr_hub_not_text", "it is not UTF-8 text.", "UTF-8 텍스트가 아닙니다."),
    ("phr_hub_not_a_config", "it is JSON, but not a model's config.json.", "JSON이지만 모델의 config.json이 아닙니다."),
    ("phr_hub_not_model_info", "it is not the model API's JSON object.", "모델 API의 JSON 객체가 아닙니다."),
    ("phr_hub_bad_safetensors", "its \"safetensors\" field holds no whole-number parameter counts.", "\"safetensors\" 항목에 정수 파라미터 수가 없습니다."),
    ("phr_hub_bad_index", "it has neither metadata.total_parameters nor metadata.total_size as a whole number.", "metadata.total_parameters도 metadata.total_size도 정수로 들어 있지 않습니다."),
    ("phr_hub_no_count", "huggingface.co gives no safetensors parameter count for this model (no safetensors files, or not counted yet).", "huggingface.co가 이 모델의 safetensors 파라미터 수를 주지 않습니다(safetensors 파일이 없거나 아직 세지 않았습니다)."),
    ("phr_hub_same", "Both counts agree: the checkpoint stores exactly the parameters the calculator counts.", "두 값이 같습니다. 체크포인트에 저장된 파라미터가 계산기가 센 것과 정확히 일치합니다."),
    ("phr_hub_more", "The checkpoint stores {diff} more parameters ({pct}) than the calculator counts: usually weights outside the language model it reads (a vision or audio tower, multi-token-prediction layers) or a tensor stored twice, such as an output head tied to the embeddings.", "체크포인트가 계산기보다 파라미터를 {diff}개({pct}) 더 저장합니다. 대개 계산기가 읽는 언어 모델 밖의 가중치(비전·오디오 타워, 다중 토큰 예측(MTP) 층)이거나, 임베딩과 묶인 출력 헤드처럼 두 번 저장된 텐서입니다."),
    ("phr_hub_fewer", "The checkpoint stores {diff} fewer parameters ({pct}) than the calculator counts: usually tensors the checkpoint leaves out or shares, or weights packed several to one stored element.", "체크포인트가 계산기보다 파라미터를 {diff}개({pct}) 덜 저장합니다. 대개 체크포인트가 생략하거나 공유하는 텐서, 또는 여러 값을 한 원소에 묶어 저장한 가중치 때문입니다."),
    ("phr_hub_fewer_packed", "The checkpoint stores {diff} fewer elements ({pct}) than the calculator counts parameters: its {method} weights pack several low-bit values into one stored element (I32 or U8), and the Hub counts stored elements.", "체크포인트의 저장 원소 수가 계산기의 파라미터 수보다 {diff}개({pct}) 적습니다. {method} 가중치는 저비트 값 여러 개를 저장 원소 하나(I32 또는 U8)에 묶으며, Hub는 저장 원소를 셉니다."),
    ("phr_hub_estimated", "The Hub's figure is an estimate: the index's total_size of {bytes} bytes × 8 ÷ {bits} bits per parameter ({dtype}); scales and tensors kept at another precision make it approximate.", "Hub 값은 추정치입니다: 인덱스의 total_size {bytes}바이트 × 8 ÷ 파라미터당 {bits}비트({dtype}). 스케일이나 다른 정밀도로 저장된 텐서가 있으면 근삿값이 됩니다."),
    ("phr_hub_from_index_params", "The Hub's figure is the index's metadata.total_parameters (the model API gave no safetensors count).", "Hub 값은 인덱스의 metadata.total_parameters입니다(모델 API가 safetensors 파라미터 수를 주지 않았습니다)."),
    ("model_hub_label", "Fetch a config from Hugging Face (model id)", "Hugging Face에서 config 가져오기 (모델 ID)"),
    ("model_hub_placeholder", "ORG/NAME, e.g. Qwen/Qwen3-8B", "ORG/NAME, 예: Qwen/Qwen3-8B"),
    ("model_hub_fetch", "Fetch from Hugging Face", "Hugging Face에서 가져오기"),
    ("model_hub_fetching", "Fetching…", "가져오는 중…"),
    ("model_hub_privacy", "Only when you press the button, the page sends the model id to huggingface.co (config.json, the model API and, if there is one, model.safetensors.index.json) and nothing else: no cookie, no token, no other input. The page makes no other request.", "버튼을 눌렀을 때에만 이 페이지가 모델 ID를 huggingface.co로 보냅니다(config.json, 모델 API, 있으면 model.safetensors.index.json). 그 밖에는 아무것도 보내지 않습니다: 쿠키도, 토큰도, 다른 입력도 없습니다. 이 페이지는 다른 요청을 하지 않습니다."),
    ("model_hub_ours", "Calculator's count", "계산기의 파라미터 수"),
    ("model_hub_theirs", "Hugging Face's count (safetensors)", "Hugging Face의 파라미터 수(safetensors)"),
    ("model_hub_none", "not given", "제공되지 않음"),
    ("model_hub_kept", "The last fetched model stays in use.", "마지막으로 가져온 모델을 계속 사용합니다."),
    ("model_hub_loaded", "Fetched {id}: its config.json is in the text box above.", "{id}을(를) 가져왔습니다. config.json이 위 입력란에 들어 있습니다."),
    // --- config class defaults, totals, new families (issue 16) ---
    ("ledger_class_default", "class default", "클래스 기본값"),
    ("ldg_class_default", "{key}: default of {class} (transformers {version})", "{key}: {class}의 기본값 (transformers {version})"),
    ("ldg_language_model_part", "the config nests its language model under {part}", "config가 언어 모델을 {part} 아래에 둠"),
    ("wrn_nested_disagree", "The top level and {part} disagree: {pairs}. The values in {part} were used, as transformers uses them.", "최상위와 {part}의 값이 서로 다릅니다: {pairs}. transformers처럼 {part}의 값을 썼습니다."),
    ("ldg_mtp_modules_stored", "multi-token-prediction modules as the checkpoint stores them (decoder layer, projections, norms, and their own embedding and head copies): part of params_total, not of the language model", "체크포인트에 저장된 다중 토큰 예측(MTP) 모듈 (디코더 레이어, 사영, 정규화, 자체 임베딩·헤드 복사본): params_total에는 들고 언어 모델에는 들지 않음"),
    ("ldg_mtp_not_loaded", "vLLM skips the MTP module unless speculative decoding uses it, so weights memory leaves it out; include it with --include-mtp (CLI) or mtp=1 (URL)", "vLLM은 추측 디코딩에 쓰지 않는 한 MTP 모듈을 불러오지 않으므로 가중치 메모리에서 뺌; 포함하려면 --include-mtp (CLI) 또는 mtp=1 (URL)"),
    ("wrn_mtp_stored", "The checkpoint stores {mtp} multi-token-prediction module(s): {params} parameters with their own embedding and head copies. Checkpoint {total} = main model {main} + MTP {params}. Serving engines load them only for speculative decoding.", "체크포인트에 다중 토큰 예측(MTP) 모듈이 {mtp}개 저장되어 있습니다: 자체 임베딩·헤드 복사본을 포함해 파라미터 {params}개. 체크포인트 {total} = 본 모델 {main} + MTP {params}. 서빙 엔진은 추측 디코딩에만 이 모듈을 불러옵니다."),
    ("ldg_vision_tower_counted", "vision tower and its projector, counted in params.other and params.vision (loaded on the GPU with the model)", "비전 타워와 프로젝터, params.other와 params.vision에 셈 (모델과 함께 GPU에 올라감)"),
    ("ldg_mamba_head_dim_auto", "mamba_d_head is \"auto\": mamba_expand × hidden_size / mamba_n_heads", "mamba_d_head가 \"auto\": mamba_expand × hidden_size / mamba_n_heads"),
    ("ldg_mllama_cross_layers", "cross-attention layers (to the image): q/k norms and two gates each beyond a self-attention layer", "(이미지로의) 교차 어텐션 레이어: 자기 어텐션 레이어보다 q/k 정규화와 게이트 둘이 더 있음"),
    ("wrn_mllama_cross_kv", "{n} cross-attention layers attend to the image's tokens: their cache holds those tokens, not the text's; the KV figures count them like self-attention layers (an upper bound).", "교차 어텐션 레이어 {n}개는 이미지 토큰에 어텐션합니다: 그 캐시는 텍스트가 아니라 이미지 토큰을 담습니다. KV 수치는 이들을 자기 어텐션처럼 셉니다 (상한)."),
    ("ldg_default_no_qk_norm", "default: no q/k norms", "기본값: q/k 정규화 없음"),
    ("ldg_one_norm_parallel_block", "one LayerNorm per layer (attention and MLP run in parallel on it)", "레이어마다 LayerNorm 하나 (어텐션과 MLP가 병렬로 그 출력을 씀)"),
    ("ldg_layernorm_with_bias", "two LayerNorms per layer, each with a weight and a bias", "레이어마다 LayerNorm 둘, 각각 가중치와 편향"),
    ("ldg_plain_mlp_c_fc_c_proj", "a plain MLP (up and down projections, no gate)", "게이트 없는 MLP (up, down 사영)"),
    ("ldg_default_no_lm_head_bias", "default: no lm_head bias", "기본값: lm_head 편향 없음"),
    ("card_include_mtp", "load the MTP module (speculative decoding with MTP)", "MTP 모듈 불러오기 (MTP 추측 디코딩)"),
    ("prm_language_model", "language model: {n}", "언어 모델: {n}"),
    ("prm_vision", "vision/audio tower with its projector: {n} (loaded on the GPU)", "비전/오디오 타워와 프로젝터: {n} (GPU에 올라감)"),
    ("prm_mtp_skipped", "multi-token prediction (MTP) modules: {n} (in the checkpoint; vLLM skips them unless speculative decoding uses them: not in weights memory)", "다중 토큰 예측(MTP) 모듈: {n} (체크포인트에 있음; vLLM은 추측 디코딩에 쓰지 않으면 불러오지 않음: 가중치 메모리에서 뺌)"),
    ("prm_mtp_loaded", "multi-token prediction (MTP) modules: {n} (loaded for speculative decoding: in weights memory)", "다중 토큰 예측(MTP) 모듈: {n} (추측 디코딩용으로 불러옴: 가중치 메모리에 포함)"),
    ("wrn_unknown_type_guessed", "model_type \"{mt}\" is not one this calculator knows; it was read as a generic Llama-style decoder, guessing {keys} (check the ledger).", "model_type \"{mt}\"는 이 계산기가 모르는 종류입니다. 일반적인 Llama 방식 디코더로 읽었고 {keys} 값을 추정했습니다 (가정 기록을 확인하세요)."),
    // --- bring your own benchmark: efficiency fit (issue 17 part 7) ---
    ("exp_fit_bench", "a benchmark that states a TPOT or ITL (median or mean) and a TTFT, each above 0, so that the decode and prefill efficiencies can be fitted", "효율을 맞추려면 TPOT 또는 ITL(중앙값 또는 평균)과 TTFT가 0보다 크게 적힌 벤치마크여야 합니다"),
    ("fit_found_no_tpot", "a result with no TPOT or ITL above 0", "0보다 큰 TPOT이나 ITL이 없는 결과"),
    ("fit_found_no_ttft", "a result with no TTFT above 0", "0보다 큰 TTFT가 없는 결과"),
    ("fit_found_unmatched", "a result whose fitted statistic the simulation cannot produce (no request finished)", "시뮬레이션이 맞출 통계를 만들지 못하는 결과(끝난 요청 없음)"),
    ("view_perf_eff_custom", "Fitted or edited efficiencies are in use (carried by this link), not the calibration defaults: {list}. Every latency, throughput and cost in this section uses them; the ranges shown are those of the defaults.", "보정 기본값이 아니라 맞추거나 수정한 효율(이 링크에 담김)을 쓰고 있습니다: {list}. 이 절의 모든 지연 시간, 처리량, 비용은 이 값을 씁니다. 표시된 범위는 기본값의 것입니다."),
    ("view_perf_eff_custom_item", "{label} {value} (default {default})", "{label} {value} (기본값 {default})"),
];

/// Bytes of [`TABLE`] packed as `key NUL English NUL Korean NUL` per row.
const fn packed_len(t: &[(&str, &str, &str)]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < t.len() {
        n += t[i].0.len() + t[i].1.len() + t[i].2.len() + 3;
        i += 1;
    }
    n
}

/// [`TABLE`] packed (see [`packed_len`]); a NUL inside a string fails the build.
const fn pack<const N: usize>(t: &[(&str, &str, &str)]) -> [u8; N] {
    let mut out = [0u8; N];
    let (mut at, mut i) = (0, 0);
    while i < t.len() {
        let parts = [t[i].0.as_bytes(), t[i].1.as_bytes(), t[i].2.as_bytes()];
        let mut p = 0;
        while p < parts.len() {
            let b = parts[p];
            let mut j = 0;
            while j < b.len() {
                assert!(b[j] != 0, "a NUL character in the translation table");
                out[at] = b[j];
                at += 1;
                j += 1;
            }
            at += 1; // the NUL separator (already zero)
            p += 1;
        }
        i += 1;
    }
    out
}

static PACKED: [u8; packed_len(TABLE)] = pack(TABLE);

/// The whole table as one text, built at compile time.
static PACKED_TEXT: &str = match std::str::from_utf8(&PACKED) {
    Ok(s) => s,
    Err(_) => panic!("the translation table is not UTF-8"),
};

/// The rows of [`TABLE`], unpacked once from the compiled-in text.
pub fn entries() -> &'static [(&'static str, &'static str, &'static str)] {
    static ROWS: OnceLock<Vec<(&str, &str, &str)>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let mut parts = PACKED_TEXT.split('\0');
        let mut rows = Vec::with_capacity(TABLE.len());
        while let (Some(k), Some(en), Some(ko)) = (parts.next(), parts.next(), parts.next()) {
            rows.push((k, en, ko));
        }
        rows
    })
}

/// The string for `key` in `lang`; the key itself if missing (a test forbids that).
pub fn tr(lang: Lang, key: &str) -> &'static str {
    match find(key) {
        Some(i) => {
            let (_, en, ko) = entries()[i];
            match lang {
                Lang::En => en,
                Lang::Ko => ko,
            }
        }
        None => "⟨missing translation⟩",
    }
}

/// The row of `key` in [`entries`]. The keys are sorted once (by position on ties, so the
/// first row of a key wins, as a scan would): a page redraw looks up a few hundred keys, and
/// a linear scan of the table for each was a measurable part of a change's cost.
fn find(key: &str) -> Option<usize> {
    static SORTED: OnceLock<Vec<usize>> = OnceLock::new();
    let rows = entries();
    let sorted = SORTED.get_or_init(|| {
        crate::core::base::order::order_by(rows.len(), &|a, b| rows[a].0.cmp(rows[b].0))
    });
    let at = sorted.partition_point(|&i| rows[i].0 < key);
    sorted.get(at).copied().filter(|&i| rows[i].0 == key)
}

/// Whether `key` exists in the table.
pub fn has(key: &str) -> bool {
    find(key).is_some()
}

/// Replaces every `{name}` in `template` by its value. Placeholders without a value are left
/// as they are (a test checks that none remain); values are inserted verbatim, never
/// re-scanned, so a value containing `{x}` cannot inject another placeholder.
pub fn fill(template: &str, vals: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match vals.iter().find(|(n, _)| *n == name) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `{name}` placeholders of a template, in order of appearance.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                names.push(&after[..close]);
                rest = &after[close + 1..];
            }
            None => break,
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn table_is_complete_and_unique() {
        let mut seen = HashSet::new();
        for (k, en, ko) in TABLE {
            assert!(seen.insert(*k), "duplicate key {k}");
            assert!(!en.trim().is_empty(), "{k}: English missing");
            assert!(!ko.trim().is_empty(), "{k}: Korean missing");
        }
    }

    #[test]
    fn the_packed_table_unpacks_to_the_table() {
        assert_eq!(entries(), TABLE);
        for (k, en, ko) in TABLE {
            assert_eq!((tr(Lang::En, k), tr(Lang::Ko, k)), (*en, *ko), "{k}");
        }
    }

    #[test]
    fn lang_codes() {
        assert_eq!(Lang::from_code("ko-KR"), Some(Lang::Ko));
        assert_eq!(Lang::from_code("en"), Some(Lang::En));
        assert_eq!(Lang::from_code("fr"), None);
    }
}
