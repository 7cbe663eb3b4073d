"""A voice agent built the way LiveKit's quickstart builds one (livekit-agents 1.8.9 from
PyPI, unmodified): an AgentServer worker whose rtc_session entrypoint runs an AgentSession
with Silero VAD and OpenAI STT, LLM and TTS, all three pointed at Plimsoll's mock through
OPENAI_BASE_URL. The worker does not take calls itself: it registers with a LiveKit server
(LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET), which dispatches it a job for every
new room; the job's agent joins the room as a participant (over WebRTC, through the
server's SFU), hears the caller's audio track and publishes its own.

Differences from the quickstart, each because of the mock or this machine:
  * Turns end on the VAD's silence (turn_detection="vad"), not the quickstart's
    MultilingualModel turn detector: its weights come from a model hub this setup cannot
    reach, and a model trained on people may not judge Plimsoll's synthetic voice well.
  * No noise cancellation plugin (LiveKit Cloud only), and no greeting: the caller speaks
    first, so every reply answers a caller's turn.
  * Its health server listens on loopback at $PORT (Plimsoll's probe times it), not on
    every interface at 8081.

A caller must not speak before the agent has subscribed to its track (the server's
TrackSubscribed signal, ~0.5 s after the caller joins): the SFU forwards nothing before
that, so the start of the turn never reaches the agent, and a start cut past ~340 ms takes
the voice's preamble with it (the mock then hears no words).

Run it from this directory, with `livekit-server` on PATH (built from its Go module:
`go install github.com/livekit/livekit-server/cmd/server@v1.13.5` puts it in ~/go/bin/server;
copy it onto PATH as livekit-server, as plimsoll.toml's header shows):
  cd examples/livekit-agent
  python3 -m venv .venv && .venv/bin/pip install -r requirements.txt
  plimsoll check                  # two calls side by side, each heard
  plimsoll ramp --cpus 1          # "holds N calls · wall: ..."
Plimsoll starts the LiveKit server fresh for every step (plimsoll.toml's [[service]], on
loopback, its CPU and RSS on a row of their own), the mock, then this worker in `start`
mode with LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET set, and waits for its
"registered worker".
`start` is the production mode (one idle job process prewarmed per CPU, NUM_IDLE_PROCESSES
to change how many; no new jobs while the CPU is 70 % busy, LOAD_THRESHOLD to change it);
`dev` reloads on change and prewarms none. The server gates too: it dispatches no job to a
worker whose reported load is at or above its `agents.target_load` (0.7 by default;
plimsoll.toml's --config-body sets it to 1.0, for a machine shared with the load generator). With LIVEKIT_AGENT_NAME set the
worker takes only explicit dispatches for that name; unset, every new room gets the agent.
"""

import os

from livekit import agents
from livekit.agents import Agent, AgentServer, AgentSession, JobContext, JobProcess
from livekit.plugins import openai, silero

MOCK = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8700/v1")
KEY = os.environ.get("OPENAI_API_KEY", "sk-mock")


class Assistant(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="You are a helpful voice AI assistant. Be brief.")


def prewarm(proc: JobProcess) -> None:
    # Loaded once per job process, before a job is assigned to it (as LiveKit advises).
    proc.userdata["vad"] = silero.VAD.load()


# Its health server (GET / on the main process's event loop) on loopback and the port
# Plimsoll gives it (PORT): Plimsoll's responsiveness probe times it every 100 ms, the
# worker's event-loop lag. Left alone it binds every interface on 8081 in `start` mode.
server = AgentServer(
    setup_fnc=prewarm,
    host="127.0.0.1",
    port=int(os.environ.get("PORT", "8081")),
)
if os.environ.get("NUM_IDLE_PROCESSES"):
    server.update_options(num_idle_processes=int(os.environ["NUM_IDLE_PROCESSES"]))
if os.environ.get("JOB_EXECUTOR"):
    # "process" (Linux's default: each call a job process forked from one that loaded the
    # VAD) or "thread" (every call a thread of one process): plimsoll.toml's two arms.
    server.update_options(job_executor_type=agents.JobExecutorType(os.environ["JOB_EXECUTOR"]))
if os.environ.get("LOAD_THRESHOLD"):
    # The worker stops taking jobs while its load (the CPU use of its whole cgroup, 2.5 s
    # average) is at or above this: 0.7 by default in production. On a machine shared with
    # the load generator or the mock that load is theirs too, and a room created while the
    # worker is marked full gets no agent at all (the dispatch is not retried).
    server.update_options(load_threshold=float(os.environ["LOAD_THRESHOLD"]))


@server.rtc_session()  # the agent's name, for explicit dispatch: LIVEKIT_AGENT_NAME
async def entrypoint(ctx: JobContext) -> None:
    session = AgentSession(
        vad=ctx.proc.userdata["vad"],
        stt=openai.STT(base_url=MOCK, api_key=KEY, model="gpt-4o-mini-transcribe"),
        llm=openai.LLM(base_url=MOCK, api_key=KEY, model="gpt-4.1-mini"),
        tts=openai.TTS(base_url=MOCK, api_key=KEY),  # the plugin's defaults: mp3, as SSE
        # The turn ends on the VAD's silence: LiveKit's turn-detector model cannot be
        # loaded here (see above).
        turn_handling={"turn_detection": "vad"},
    )
    await session.start(room=ctx.room, agent=Assistant())


if __name__ == "__main__":
    agents.cli.run_app(server)
