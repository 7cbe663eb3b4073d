//! `plimsoll init`: a commented plimsoll.toml and session.toml for the user's system,
//! written from a few flags, never over an existing file.

use std::path::{Path, PathBuf};

/// What `init` is told about the system under test.
#[derive(Clone, Debug, Default)]
pub struct InitOptions {
    /// The command that starts the SUT; `{{port}}` is its port.
    pub command: String,
    /// The URL of a turn; default `{{base}}/chat` (or the Chat Completions path with `openai`).
    pub url: Option<String>,
    /// The JSON body of a turn; must carry the session marker.
    pub body: Option<String>,
    /// The SUT speaks the OpenAI Chat Completions API (a proxy, a gateway, an
    /// OpenAI-compatible agent server).
    pub openai: bool,
    /// A path that answers 2xx once the SUT is ready.
    pub ready_path: String,
    /// The turn's endpoint takes form fields (`form = { … }`), not JSON.
    pub form: bool,
    /// A session file written elsewhere (`init --from-openapi`), used as it is.
    pub session: Option<String>,
}

/// Where `init` writes the schemas its files name on their first line.
pub const SCHEMAS: &str = ".plimsoll/schemas";

const MARKER: &str = "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]]";

fn config(o: &InitOptions, words: &[String]) -> String {
    let command = words
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mock = "# scenario = \"scenario.toml\" # the models the mock serves (default: any name, 200 ms to first token, 5 ms a token)";
    format!(
        r#"# Written by `plimsoll init`. Every key is in docs/config.md; an editor that reads the
# schema on the first line (Taplo: VS Code's Even Better TOML, Zed, Helix) completes them.
# Next: `plimsoll check` (one session, every failure explained), then `plimsoll ramp --cpus 1`.

[sut]
# Started fresh for every step, in its own process group, with OPENAI_BASE_URL,
# ANTHROPIC_BASE_URL (the mock), dummy API keys and PORT / PLIMSOLL_SUT_PORT ({{{{port}}}}) set.
command = [{command}]
ready = "http"            # or "port" (the port accepts connections), or "log" (a line of output)
ready_path = "{ready}"
ready_timeout_s = 60
# cwd = "."               # default: this file's directory
# env = {{ LOG_LEVEL = "warn" }}

[mock]
{mock}
seed = 1

[session]
file = "session.toml"

[step]
concurrency = 2           # where `plimsoll ramp --ladder auto` starts doubling
timeout_s = 300

[budget]                  # what "holds" means for a ramp's verdict (--budget overrides)
latency_inflation = 2.0   # p50 session time / the mock's own time
# latency_vs_single = 2.0 # p50 session time / the same SUT's at the first level
# p99_turn_ms = 2000
error_rate = 0.0
"#,
        ready = o.ready_path,
    )
}

fn session(o: &InitOptions) -> String {
    if let Some(s) = &o.session {
        return s.clone();
    }
    if o.form {
        return form_session(o);
    }
    if o.openai {
        let url = o
            .url
            .clone()
            .unwrap_or_else(|| "{{base}}/v1/chat/completions".into());
        let text = o
            .body
            .clone()
            .map_or(String::new(), |b| format!("body = '{b}'\n"));
        return format!(
            r#"# Written by `plimsoll init --openai`: Plimsoll is a chat client of your endpoint. Each
# turn sends the whole conversation so far and appends the reply, so the mock's history
# check holds. Every key: docs/config.md.
# A gateway that wants a key (LiteLLM's master key, a proxy's virtual keys): set it for
# the SUT under [sut] env in plimsoll.toml (e.g. LITELLM_MASTER_KEY = "sk-plimsoll") and
# send it as `authorization = "Bearer sk-plimsoll"` under [headers] below.
protocol = "openai-chat"
url = "{url}"
model = "gpt-4o-mini"      # the model name your endpoint routes to the mock
stream = false             # true: stream, and time the first token
turns = 3
# The user's text of a turn (default: the marker and "Please handle turn N."); keep the
# [[plimsoll …]] marker in it so the mock's integrity oracle can check each conversation.
{text}
[headers]
content-type = "application/json"

[[check]]
pointer = "/content"        # the assistant's message
present = true
"#
        );
    }
    let url = o.url.clone().unwrap_or_else(|| "{{base}}/chat".into());
    let body = o.body.clone().unwrap_or_else(|| {
        format!(
            r#"{{"session": "{{{{session}}}}", "message": "{MARKER} Please handle turn {{{{turn}}}}."}}"#
        )
    });
    format!(
        r#"# Written by `plimsoll init`: how one session talks to your system. Every key is in
# docs/config.md (and completed from the schema on the first line). Top-level keys go
# above [headers].
protocol = "http"          # or "sse" (a stream per turn), "ws", or "openai-chat"
method = "POST"
url = "{url}"
turns = 3
# The marker lets the mock's integrity oracle check each conversation: keep it in the text
# your system sends to the LLM as the user's message.
body = '{body}'

[headers]
content-type = "application/json"

# [[check]]                 # a reply that fails a check fails the session
# pointer = "/reply"
# present = true
"#
    )
}

/// A session whose turn sends form fields: the message (with the marker) and a session id.
fn form_session(o: &InitOptions) -> String {
    let url = o.url.clone().unwrap_or_else(|| "{{base}}/chat".into());
    format!(
        r#"# Written by `plimsoll init --form`: one session, its turns sent as form fields. Every
# key is in docs/config.md. Top-level keys go above any [table].
protocol = "http"          # or "sse" (a stream per turn)
method = "POST"
url = "{url}"
turns = 3
# URL-encoded by Plimsoll (content-type application/x-www-form-urlencoded), placeholders
# filled first. Keep the marker in the field your system sends to the LLM as the user's
# message; name the fields as your endpoint does. `multipart = {{ … }}` sends
# multipart/form-data instead, with file parts: image = {{ path = "cat.png" }} or
# blob = {{ bytes = 65536 }}.
form = {{ message = "{MARKER} Please handle turn {{{{turn}}}}.", session_id = "{{{{uuid}}}}" }}

# [[check]]                 # a reply that fails a check fails the session
# pointer = "/content"
# present = true
"#
    )
}

/// Writes the files into `dir`; returns their paths. Refuses to overwrite any of them.
pub fn init(dir: &Path, o: &InitOptions) -> anyhow::Result<Vec<PathBuf>> {
    let words = shlex::split(&o.command)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--command {:?}: give the command that starts your system, e.g. --command 'python app.py --port {{{{port}}}}'",
                o.command
            )
        })?;
    // The first line names the schema editors complete and check the keys from (Taplo).
    let schema_line = |name: &str| format!("#:schema ./{SCHEMAS}/{name}.schema.json\n");
    let files = vec![
        (
            "plimsoll.toml",
            schema_line("plimsoll") + &config(o, &words),
        ),
        ("session.toml", schema_line("session") + &session(o)),
    ];
    if let Some((name, _)) = files.iter().find(|(n, _)| dir.join(n).exists()) {
        anyhow::bail!(
            "{} already exists; plimsoll init does not overwrite (move it away, or init in another --dir)",
            dir.join(name).display()
        );
    }
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text)?;
        written.push(p);
    }
    super::schema::write_all(&dir.join(SCHEMAS))?;
    written.push(dir.join(SCHEMAS));
    // What was written must load: the same readers as every other command.
    experiment::Config::load(&dir.join("plimsoll.toml"))?;
    drive::SessionSpec::load(&dir.join("session.toml"))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_files_that_load_and_never_overwrites() {
        let dir = std::env::temp_dir().join(format!("plimsoll-init-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let o = InitOptions {
            command: "python app.py --port '{{port}}'".into(),
            openai: true,
            ready_path: "/health".into(),
            ..InitOptions::default()
        };
        let files = init(&dir, &o).unwrap();
        assert_eq!(files.len(), 3);
        // Each file names its schema on its first line, and the schema is there.
        for name in ["plimsoll", "session"] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
            let line = format!("#:schema ./.plimsoll/schemas/{name}.schema.json\n");
            assert!(text.starts_with(&line), "{text}");
            assert!(dir
                .join(SCHEMAS)
                .join(format!("{name}.schema.json"))
                .is_file());
        }
        let cfg = experiment::Config::load(&dir.join("plimsoll.toml")).unwrap();
        assert_eq!(cfg.command, ["python", "app.py", "--port", "{{port}}"]);
        let s = drive::SessionSpec::load(&dir.join("session.toml")).unwrap();
        assert!(s.turn[0].url.ends_with("/v1/chat/completions") && s.warnings.is_empty());
        assert_eq!(s.protocol, drive::spec::Protocol::OpenaiChat);
        let again = init(&dir, &o).unwrap_err().to_string();
        assert!(again.contains("already exists"), "{again}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn init_form_writes_a_session_of_form_fields_that_loads() {
        let dir = std::env::temp_dir().join(format!("plimsoll-init-form-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let o = InitOptions {
            command: "python app.py".into(),
            url: Some("{{base}}/agents/a/runs".into()),
            form: true,
            ready_path: "/health".into(),
            ..InitOptions::default()
        };
        init(&dir, &o).unwrap();
        let s = drive::SessionSpec::load(&dir.join("session.toml")).unwrap();
        let Some(drive::spec::Fields::Form(f)) = &s.turn[0].fields else {
            panic!("{:?}", s.turn[0].fields)
        };
        assert_eq!(f[0].0, "message");
        assert!(f[0].1.starts_with(MARKER));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
