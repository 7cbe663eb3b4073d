//! `plimsoll init`: a commented plimsoll.toml and session.toml for the user's system
//! (the files themselves: `init_files`), the session written from flags or, with
//! `--from-openapi`, from the SUT's own OpenAPI document (read by `crate::openapi`) for
//! the operation the user picks.

use clap::Args;
use std::io::IsTerminal;
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
    /// Write the session from your running system's OpenAPI document (FastAPI serves it
    /// at /openapi.json): method, path, path parameters, the body with its required
    /// fields in its own encoding (JSON, form or multipart), and a [[setup]] call for each
    /// id the turn needs. Start your system first; only loopback unless --allow-remote.
    #[arg(long, value_name = "URL", conflicts_with_all = ["openai", "form", "body", "url"])]
    pub from_openapi: Option<String>,
    /// With --from-openapi: the operation of a turn, by operationId or "METHOD /path"
    /// (e.g. "POST /threads/{thread_id}/runs/wait"). Without it, the operations are listed
    /// and, on a terminal, you are asked.
    #[arg(long, requires = "from_openapi")]
    pub operation: Option<String>,
    /// With --from-openapi: fetch the document from another machine.
    #[arg(long, requires = "from_openapi")]
    pub allow_remote: bool,
    /// A path that answers 2xx once your system is ready (default /health; with
    /// --from-openapi, the document's own path).
    #[arg(long)]
    pub ready_path: Option<String>,
    /// Where to write the files.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
}

pub fn init(a: InitArgs) -> anyhow::Result<u8> {
    let (session, ready_path) = match &a.from_openapi {
        Some(url) => {
            let (session, doc_path) = from_openapi(url, a.operation.as_deref(), a.allow_remote)?;
            (Some(session), a.ready_path.clone().unwrap_or(doc_path))
        }
        None => (
            None,
            a.ready_path.clone().unwrap_or_else(|| "/health".into()),
        ),
    };
    let o = super::init_files::InitOptions {
        command: a.command,
        url: a.url,
        body: a.body,
        openai: a.openai,
        ready_path,
        form: a.form,
        session,
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

/// The session for the picked operation of the document at `url`, and the document's path.
fn from_openapi(url: &str, want: Option<&str>, remote: bool) -> anyhow::Result<(String, String)> {
    let (addr, path) = drive::address::target(url, remote)?;
    let fetched = super::runtime()?.block_on(async {
        let mut c = drive::http::Conn::new(addr);
        c.simple("GET", &path, bytes::Bytes::new()).await
    });
    let (status, body) = fetched
        .map_err(|e| anyhow::anyhow!("--from-openapi {url}: {e} (is your system running?)"))?;
    if status != 200 {
        anyhow::bail!(
            "--from-openapi {url}: HTTP {status}; FastAPI serves its document at /openapi.json"
        );
    }
    let raw: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| anyhow::anyhow!("--from-openapi {url}: not JSON ({e})"))?;
    let doc = crate::openapi::Doc::parse(raw)?;
    let op = match want {
        Some(w) => doc.pick(w)?,
        None => ask(&doc)?,
    };
    eprintln!("operation: {}", op.label());
    Ok((crate::openapi::session(&doc, op)?, path))
}

/// Lists the operations (those that take a message first) and, on a terminal, asks.
fn ask(doc: &crate::openapi::Doc) -> anyhow::Result<&crate::openapi::Operation> {
    let mut ops: Vec<&crate::openapi::Operation> = doc.ops.iter().collect();
    ops.sort_by_key(|o| !o.takes_a_message());
    eprintln!("operations (* takes a message: likely a turn):");
    for (i, o) in ops.iter().enumerate() {
        let star = if o.takes_a_message() { "*" } else { " " };
        eprintln!("  {star}{:>3}. {}  {}", i + 1, o.label(), o.summary);
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "pick the operation of a turn with --operation (its operationId or \"METHOD /path\")"
        );
    }
    eprint!("which one is a turn? (number, operationId or METHOD /path): ");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    match line.trim().parse::<usize>() {
        Ok(n) if (1..=ops.len()).contains(&n) => Ok(ops[n - 1]),
        _ => doc.pick(line.trim()),
    }
}
