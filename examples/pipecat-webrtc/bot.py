"""The Pipecat voice agent of examples/pipecat-voice — Silero VAD, OpenAI STT, LLM and TTS,
all pointed at Plimsoll's mock through OPENAI_BASE_URL — met the way a browser meets it:
over WebRTC with Pipecat's SmallWebRTC transport (pipecat-ai[webrtc] 1.14.0 from PyPI,
unmodified, aiortc underneath). POST /api/offer is what Pipecat's development runner
serves (`SmallWebRTCRequestHandler`): the caller's SDP offer in, the answer out once the
bot has gathered its candidates; each call then gets a pipeline of its own in this one
process. GET /health answers beside the calls (the responsiveness probe).

A caller's turn ends after 0.6 s of silence, as in examples/pipecat-voice (see its bot.py
for why not Pipecat's default smart-turn model).

Run by Plimsoll (plimsoll.toml): uvicorn bot:app on {{port}}.
"""

import os

from fastapi import BackgroundTasks, FastAPI
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.stt import OpenAISTTService
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.transports.smallwebrtc.request_handler import (
    SmallWebRTCPatchRequest,
    SmallWebRTCRequest,
    SmallWebRTCRequestHandler,
)
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

MOCK = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
KEY = os.environ.get("OPENAI_API_KEY", "sk-mock")
app = FastAPI()
handler = SmallWebRTCRequestHandler()


@app.get("/health")
async def health():
    return {"ok": True}


async def run_bot(connection: SmallWebRTCConnection):
    transport = SmallWebRTCTransport(
        webrtc_connection=connection,
        params=TransportParams(audio_in_enabled=True, audio_out_enabled=True),
    )
    stt = OpenAISTTService(api_key=KEY, base_url=MOCK)
    llm = OpenAILLMService(api_key=KEY, base_url=MOCK)
    tts = OpenAITTSService(api_key=KEY, base_url=MOCK, sample_rate=24000)
    context = LLMContext([{"role": "system", "content": "You are a voice agent. Be brief."}])
    user, assistant = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(
            vad_analyzer=SileroVADAnalyzer(),
            user_turn_strategies=UserTurnStrategies(
                stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.6)]
            ),
        ),
    )
    pipeline = Pipeline([transport.input(), stt, user, llm, tts, transport.output(), assistant])
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=24000),
    )

    @transport.event_handler("on_client_disconnected")
    async def _gone(transport, client):
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    await runner.run()


@app.post("/api/offer")
async def offer(request: SmallWebRTCRequest, background_tasks: BackgroundTasks):
    async def started(connection: SmallWebRTCConnection):
        background_tasks.add_task(run_bot, connection)

    return await handler.handle_web_request(request=request, webrtc_connection_callback=started)


@app.patch("/api/offer")
async def candidates(request: SmallWebRTCPatchRequest):
    await handler.handle_patch_request(request)
    return {"status": "success"}
