"""A Pipecat phone agent, as Pipecat's Twilio examples build one: FastAPI takes Twilio
Media Streams on /ws, and each call gets a pipeline of its own — Silero VAD, OpenAI STT,
LLM and TTS — in this one process. The library is used as published (pipecat-ai 1.14.0
from PyPI); the OpenAI services find the mock through OPENAI_BASE_URL, which Plimsoll sets.
The serializer is built by hand with auto_hang_up off, so hanging up makes no call to
Twilio's REST API. GET /health answers beside the calls (the responsiveness probe).

A caller's turn ends after 0.6 s of silence (SpeechTimeoutUserTurnStopStrategy) rather
than by Pipecat's default smart-turn model: that model, trained on people, judges about
one in ten of Plimsoll's synthetic utterances unfinished and then waits 3 s before
answering — a limit of the test voice, which a ramp would have blamed on the bot.

Run by Plimsoll (plimsoll.toml): uvicorn bot:app on {{port}}.
"""

import os

from fastapi import FastAPI, WebSocket
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.runner.utils import parse_telephony_websocket
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.stt import OpenAISTTService
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.transports.websocket.fastapi import (
    FastAPIWebsocketParams,
    FastAPIWebsocketTransport,
)
from pipecat.workers.runner import WorkerRunner

MOCK = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
KEY = os.environ.get("OPENAI_API_KEY", "sk-mock")
app = FastAPI()


@app.get("/health")
async def health():
    return {"ok": True}


@app.websocket("/ws")
async def call(websocket: WebSocket):
    await websocket.accept()
    _, data = await parse_telephony_websocket(websocket)  # Twilio's connected + start
    serializer = TwilioFrameSerializer(
        stream_sid=data.stream_id,
        call_sid=data.call_id,
        params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
    )
    transport = FastAPIWebsocketTransport(
        websocket=websocket,
        params=FastAPIWebsocketParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            add_wav_header=False,
            serializer=serializer,
        ),
    )
    stt = OpenAISTTService(api_key=KEY, base_url=MOCK)
    llm = OpenAILLMService(api_key=KEY, base_url=MOCK)
    tts = OpenAITTSService(api_key=KEY, base_url=MOCK, sample_rate=24000)
    context = LLMContext(
        [{"role": "system", "content": "You are a phone agent. Be brief."}]
    )
    user, assistant = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(
            vad_analyzer=SileroVADAnalyzer(),
            user_turn_strategies=UserTurnStrategies(
                stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.6)]
            ),
        ),
    )
    pipeline = Pipeline(
        [transport.input(), stt, user, llm, tts, transport.output(), assistant]
    )
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=8000, audio_out_sample_rate=8000),
    )

    @transport.event_handler("on_client_disconnected")
    async def _gone(transport, client):
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    await runner.run()
