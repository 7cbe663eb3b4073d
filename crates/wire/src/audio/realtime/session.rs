//! The Realtime session: its audio formats (pcm16 at 24 kHz, G.711 µ-law or A-law at
//! 8 kHz), server VAD, voice, instructions, tools and output modalities; `session.update`
//! merged into it as the API merges it (GA shape, and the beta shape's names too); and the
//! whole object as `session.created` and `session.updated` carry it.

use crate::error::WireError;
use crate::request::{Tool, ToolChoice};
use serde_json::{json, Value};

/// An audio format of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AudioFormat {
    /// 16-bit little-endian mono PCM at 24 kHz.
    Pcm24,
    /// G.711 µ-law at 8 kHz.
    Pcmu,
    /// G.711 A-law at 8 kHz.
    Pcma,
}

impl AudioFormat {
    pub fn rate(self) -> u32 {
        match self {
            AudioFormat::Pcm24 => 24_000,
            AudioFormat::Pcmu | AudioFormat::Pcma => 8_000,
        }
    }

    fn to_json(self) -> Value {
        match self {
            AudioFormat::Pcm24 => json!({"type": "audio/pcm", "rate": 24000}),
            AudioFormat::Pcmu => json!({"type": "audio/pcmu"}),
            AudioFormat::Pcma => json!({"type": "audio/pcma"}),
        }
    }

    /// `{"type": "audio/pcm", "rate": 24000}`, `{"type": "audio/pcmu"}`, or the beta's
    /// `"pcm16"`, `"g711_ulaw"`, `"g711_alaw"`.
    fn read(v: &Value, param: &str) -> Result<AudioFormat, WireError> {
        let name = v.get("type").and_then(Value::as_str).or(v.as_str());
        match name {
            Some("audio/pcm" | "pcm16") => match v.get("rate").and_then(Value::as_u64) {
                None | Some(24000) => Ok(AudioFormat::Pcm24),
                Some(r) => Err(WireError::invalid(
                    format!("{param}.rate"),
                    format!("{r} is not supported: audio/pcm is 24000 Hz"),
                )),
            },
            Some("audio/pcmu" | "g711_ulaw") => Ok(AudioFormat::Pcmu),
            Some("audio/pcma" | "g711_alaw") => Ok(AudioFormat::Pcma),
            _ => Err(WireError::invalid(
                format!("{param}.type"),
                "must be one of audio/pcm, audio/pcmu, audio/pcma",
            )),
        }
    }
}

/// Server-side voice activity detection: when speech starts and stops in the input.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerVad {
    pub threshold: f64,
    pub prefix_padding_ms: u32,
    pub silence_duration_ms: u32,
    pub create_response: bool,
    pub interrupt_response: bool,
}

impl Default for ServerVad {
    fn default() -> Self {
        ServerVad {
            threshold: 0.5,
            prefix_padding_ms: 300,
            silence_duration_ms: 500,
            create_response: true,
            interrupt_response: true,
        }
    }
}

/// A Realtime session as the server keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub id: String,
    pub model: String,
    pub instructions: String,
    /// `["audio"]` (with its transcript) or `["text"]`.
    pub audio_out: bool,
    pub input_format: AudioFormat,
    pub output_format: AudioFormat,
    pub voice: String,
    /// None: push to talk (the client commits).
    pub vad: Option<ServerVad>,
    /// The input's transcription model, when transcripts of the caller are asked for.
    pub transcription: Option<String>,
    pub tools: Vec<Tool>,
    pub tool_choice: ToolChoice,
    pub max_output_tokens: Option<u32>,
}

impl Session {
    pub fn new(id: String, model: String) -> Session {
        Session {
            id,
            model,
            instructions: String::new(),
            audio_out: true,
            input_format: AudioFormat::Pcm24,
            output_format: AudioFormat::Pcm24,
            voice: "marin".into(),
            vad: Some(ServerVad::default()),
            transcription: None,
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            max_output_tokens: None,
        }
    }

    /// `session.update`'s `session` merged in: the fields it names, nothing else.
    pub fn update(&mut self, s: &Value) -> Result<(), WireError> {
        let Some(o) = s.as_object() else {
            return Err(WireError::invalid("session", "must be an object"));
        };
        if let Some(t) = o.get("type").and_then(Value::as_str) {
            if t != "realtime" {
                return Err(WireError::invalid(
                    "session.type",
                    format!("{t:?}: this endpoint serves \"realtime\" sessions"),
                ));
            }
        }
        if let Some(m) = o.get("model").and_then(Value::as_str) {
            self.model = m.to_string();
        }
        if let Some(i) = o.get("instructions").and_then(Value::as_str) {
            self.instructions = i.to_string();
        }
        if let Some(m) = o
            .get("output_modalities")
            .or(o.get("modalities"))
            .and_then(Value::as_array)
        {
            self.audio_out = m.iter().any(|x| x == "audio");
        }
        let audio = o.get("audio").cloned().unwrap_or(Value::Null);
        let input = &audio["input"];
        let output = &audio["output"];
        if let Some(f) = input.get("format").or(o.get("input_audio_format")) {
            self.input_format = AudioFormat::read(f, "session.audio.input.format")?;
        }
        if let Some(f) = output.get("format").or(o.get("output_audio_format")) {
            self.output_format = AudioFormat::read(f, "session.audio.output.format")?;
        }
        if let Some(v) = output.get("voice").or(o.get("voice")) {
            self.voice = v
                .as_str()
                .or(v["id"].as_str())
                .unwrap_or("marin")
                .to_string();
        }
        if let Some(td) = input.get("turn_detection").or(o.get("turn_detection")) {
            self.vad = read_vad(td)?;
        }
        if let Some(t) = input
            .get("transcription")
            .or(o.get("input_audio_transcription"))
        {
            self.transcription = t
                .get("model")
                .and_then(Value::as_str)
                .map(String::from)
                .or(t.is_object().then(|| "gpt-4o-transcribe".to_string()));
        }
        self.update_tools(o);
        Ok(())
    }

    /// The tool half of `session.update`: tools, tool choice, output cap.
    fn update_tools(&mut self, o: &serde_json::Map<String, Value>) {
        if let Some(tools) = o.get("tools").and_then(Value::as_array) {
            self.tools = tools
                .iter()
                .filter(|t| t["type"] == "function")
                .map(|t| {
                    Tool::new(
                        t["name"].as_str().unwrap_or_default().to_string(),
                        t.get("parameters")
                            .cloned()
                            .unwrap_or(json!({"type": "object"})),
                    )
                })
                .collect();
        }
        if let Some(c) = o.get("tool_choice") {
            self.tool_choice = match (c.as_str(), c["name"].as_str()) {
                (Some("none"), _) => ToolChoice::None,
                (Some("required"), _) => ToolChoice::Required,
                (_, Some(n)) => ToolChoice::Named(n.to_string()),
                _ => ToolChoice::Auto,
            };
        }
        if let Some(m) = o
            .get("max_output_tokens")
            .or(o.get("max_response_output_tokens"))
        {
            self.max_output_tokens = m.as_u64().map(|n| n as u32);
        }
    }

    /// The whole session as `session.created` and `session.updated` carry it.
    pub fn to_json(&self, expires_at: u64) -> Value {
        let vad = match &self.vad {
            Some(v) => {
                json!({"type": "server_vad", "threshold": v.threshold, "prefix_padding_ms": v.prefix_padding_ms,
                "silence_duration_ms": v.silence_duration_ms, "idle_timeout_ms": null,
                "create_response": v.create_response, "interrupt_response": v.interrupt_response})
            }
            None => Value::Null,
        };
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": "", "parameters": t.schema}))
            .collect();
        json!({
            "type": "realtime", "object": "realtime.session", "id": self.id, "model": self.model,
            "output_modalities": [if self.audio_out { "audio" } else { "text" }],
            "instructions": self.instructions, "tools": tools,
            "tool_choice": match &self.tool_choice {
                ToolChoice::Auto => json!("auto"), ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Named(n) => json!({"type": "function", "name": n}),
            },
            "max_output_tokens": self.max_output_tokens.map_or(json!("inf"), |n| json!(n)),
            "tracing": null, "prompt": null, "include": null, "expires_at": expires_at,
            "audio": {
                "input": {"format": self.input_format.to_json(), "noise_reduction": null,
                    "transcription": self.transcription.as_ref().map(|m| json!({"model": m})),
                    "turn_detection": vad},
                "output": {"format": self.output_format.to_json(), "voice": self.voice, "speed": 1},
            }
        })
    }
}

/// `turn_detection`: server VAD with its settings, or null for push to talk.
fn read_vad(td: &Value) -> Result<Option<ServerVad>, WireError> {
    if td.is_null() {
        return Ok(None);
    }
    match td["type"].as_str() {
        Some("server_vad") | Some("semantic_vad") | None => {
            let d = ServerVad::default();
            let num = |k: &str, def: f64| td.get(k).and_then(Value::as_f64).unwrap_or(def);
            let flag = |k: &str, def: bool| td.get(k).and_then(Value::as_bool).unwrap_or(def);
            let threshold = num("threshold", d.threshold);
            if !(0.0..=1.0).contains(&threshold) {
                return Err(WireError::invalid(
                    "session.audio.input.turn_detection.threshold",
                    "must be from 0 to 1",
                ));
            }
            Ok(Some(ServerVad {
                threshold,
                prefix_padding_ms: num("prefix_padding_ms", d.prefix_padding_ms as f64) as u32,
                silence_duration_ms: num("silence_duration_ms", d.silence_duration_ms as f64)
                    as u32,
                create_response: flag("create_response", d.create_response),
                interrupt_response: flag("interrupt_response", d.interrupt_response),
            }))
        }
        Some(other) => Err(WireError::invalid(
            "session.audio.input.turn_detection.type",
            format!("{other:?} is not one of server_vad, semantic_vad"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_in_the_ga_shape_and_in_the_beta_shape_is_merged() {
        let mut s = Session::new("sess_1".into(), "gpt-realtime".into());
        s.update(&json!({"type": "realtime", "instructions": "be brief",
            "audio": {"input": {"format": {"type": "audio/pcmu"}, "turn_detection": {"type": "server_vad", "silence_duration_ms": 300}},
                      "output": {"format": {"type": "audio/pcmu"}, "voice": "alloy"}},
            "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]}))
            .unwrap();
        assert_eq!(
            (s.input_format, s.output_format, s.voice.as_str()),
            (AudioFormat::Pcmu, AudioFormat::Pcmu, "alloy")
        );
        assert_eq!(s.vad.as_ref().unwrap().silence_duration_ms, 300);
        assert_eq!(s.tools[0].name, "lookup");
        s.update(&json!({"input_audio_format": "pcm16", "turn_detection": null}))
            .unwrap();
        assert_eq!(
            (s.input_format, s.vad.is_none()),
            (AudioFormat::Pcm24, true)
        );
        let e = s
            .update(&json!({"audio": {"input": {"format": {"type": "audio/mp3"}}}}))
            .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("session.audio.input.format.type"));
        let v = s.to_json(0);
        assert_eq!(v["audio"]["input"]["format"]["type"], "audio/pcm");
        assert_eq!(v["audio"]["input"]["turn_detection"], Value::Null);
    }
}
