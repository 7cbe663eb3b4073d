"""A speech-to-speech voice agent as Pipecat's own examples/realtime/realtime-openai.py builds
one (pipecat-ai 1.14.0, unmodified): SmallWebRTC in, OpenAIRealtimeLLMService (the OpenAI
Realtime API, its default server turn detection and pcm16 at 24 kHz), SmallWebRTC out; its
`base_url` the mock's Realtime WebSocket. Run from a copy of examples/pipecat-webrtc, whose
venv has every package it needs, in place of that example's bot.py: uvicorn bot:app.

This is the chain issue 61 found losing words: a Realtime reply through Pipecat's output
transport and aiortc's Opus. On a bot starved of CPU that output pads its dry queue with
silence, which Plimsoll names as holes.

Planted bug, by AGENT_BUG:
  first    every call's spoken audio goes to the first call's output (one output for all
           calls, as a router keyed by the wrong id does): the first caller hears every
           reply, interleaved delta by delta as the model streams them; the others none
"""

import os

from fastapi import BackgroundTasks, FastAPI
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import OutputAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.transports.smallwebrtc.request_handler import (
    SmallWebRTCPatchRequest,
    SmallWebRTCRequest,
    SmallWebRTCRequestHandler,
)
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport
from pipecat.workers.runner import WorkerRunner

MOCK = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
REALTIME = MOCK.replace("http://", "ws://", 1).rstrip("/") + "/realtime"
KEY = os.environ.get("OPENAI_API_KEY", "sk-mock")
BUG = os.environ.get("AGENT_BUG", "")
app = FastAPI()
handler = SmallWebRTCRequestHandler()
outputs = []  # every call's output processor, the first call's first


class Route(FrameProcessor):
    """Between the model and the call's output: AGENT_BUG=first sends each piece of audio
    to the first call's output instead of this call's own."""

    def __init__(self, own):
        super().__init__()
        self.own = own

    async def process_frame(self, frame, direction):
        await super().process_frame(frame, direction)
        if BUG == "first" and isinstance(frame, OutputAudioRawFrame) and outputs[0] is not self.own:
            await outputs[0].queue_frame(frame)
        else:
            await self.push_frame(frame, direction)


@app.get("/health")
async def health():
    return {"ok": True}


async def run_bot(connection: SmallWebRTCConnection):
    transport = SmallWebRTCTransport(
        webrtc_connection=connection,
        params=TransportParams(audio_in_enabled=True, audio_out_enabled=True),
    )
    llm = OpenAIRealtimeLLMService(
        api_key=KEY,
        base_url=REALTIME,
        settings=OpenAIRealtimeLLMService.Settings(system_instruction="You are a voice agent. Be brief."),
    )
    context = LLMContext([{"role": "system", "content": "You are a voice agent. Be brief."}])
    user, assistant = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    )
    out = transport.output()
    outputs.append(out)
    pipeline = Pipeline([transport.input(), user, llm, Route(out), out, assistant])
    worker = PipelineWorker(pipeline, params=PipelineParams())

    @transport.event_handler("on_client_disconnected")
    async def _gone(transport, client):
        outputs.remove(out)
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
