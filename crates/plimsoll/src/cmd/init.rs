//! `plimsoll init`: a commented plimsoll.toml and session.toml for the user's system
//! (the files themselves: `init_files`).

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct InitArgs {
    /// The command that starts your system; {{port}} is the port it must listen on.
    #[arg(long)]
    pub command: String,
    /// The URL of one turn (default {{base}}/chat, or {{base}}/v1/chat/completions with --openai).
    #[arg(long)]
    pub url: Option<String>,
    /// The JSON body of one turn; keep the [[plimsoll …]] marker in the user's text.
    #[arg(long, conflicts_with = "form")]
    pub body: Option<String>,
    /// The turn's endpoint takes form fields, not JSON (FastAPI `Form(...)`, agno's runs):
    /// the session sends `form = { message = "[[plimsoll …]] …", session_id = "{{uuid}}" }`,
    /// URL-encoded for you. Rename the fields to your endpoint's.
    #[arg(long, conflicts_with = "openai")]
    pub form: bool,
    /// Your system speaks the OpenAI Chat Completions API (a proxy, a gateway, an OpenAI-compatible agent server).
    #[arg(long)]
    pub openai: bool,
    /// A path that answers 2xx once your system is ready.
    #[arg(long, default_value = "/health")]
    pub ready_path: String,
    /// Where to write the files.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
}

pub fn init(a: InitArgs) -> anyhow::Result<u8> {
    let o = super::init_files::InitOptions {
        command: a.command,
        url: a.url,
        body: a.body,
        openai: a.openai,
        ready_path: a.ready_path,
        form: a.form,
        session: None,
    };
    for p in super::init_files::init(&a.dir, &o)? {
        eprintln!("wrote {}", p.display());
    }
    let cd = if a.dir == std::path::Path::new(".") {
        String::new()
    } else {
        format!("cd {} && ", a.dir.display())
    };
    eprintln!("next: {cd}plimsoll check      (one session; every failure explained)\nthen: plimsoll ramp --cpus 1");
    Ok(0)
}
