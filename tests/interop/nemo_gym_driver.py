"""Drives egym's NeMo Gym resources server with NeMo Gym's own code; runs in its side venv (Python 3.12).

    python nemo_gym_driver.py EGYM_URL RESULTS_JSON < plan.json

Nothing here imports egym: what reaches egym is what NeMo Gym sends. The rollouts go the
way `ng_collect_rollouts` sends them: `ServerClient.post(agent, "/run", row)` to NeMo Gym's
own `simple_agent` (served here), which seeds the session on egym, asks the model (a
scripted one, served here: the plan's tool calls, then its answer), calls egym's tool
endpoints with the session cookies, and verifies. The other steps call egym with the same
ServerClient and aiohttp helpers the agent uses. Every answer is parsed with NeMo Gym's
models (rows as SimpleAgentRunRequest, verify answers as BaseVerifyResponse and
SimpleAgentVerifyResponse, metrics as AggregateMetrics); results go to RESULTS_JSON.

The plan: {"runs": [{"task", "calls": [[function, arguments]...], "answer"}], "direct": {same},
"unknown_task": "acme/..."}.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
import uuid
from typing import Any
from urllib.parse import urlparse

import uvicorn
from aiohttp import ClientResponseError
from fastapi import FastAPI, Request
from nemo_gym.base_resources_server import BaseVerifyResponse
from nemo_gym.config_types import AggregateMetrics, AggregateMetricsRequest, BaseServerConfig
from nemo_gym.openai_utils import (
    NeMoGymResponse,
    NeMoGymResponseCreateParamsNonStreaming,
    NeMoGymResponseFunctionToolCall,
    NeMoGymResponseOutputMessage,
    NeMoGymResponseOutputText,
)
from nemo_gym.server_utils import (
    GlobalAIOHTTPAsyncClientConfig,
    ServerClient,
    get_response_json,
    raise_for_status,
    set_global_aiohttp_client,
)
from omegaconf import OmegaConf
from responses_api_agents.simple_agent.app import (
    SimpleAgent,
    SimpleAgentConfig,
    SimpleAgentRunRequest,
    SimpleAgentVerifyResponse,
)

EGYM, AGENT, MODEL = "egym_resources_server", "egym_simple_agent", "scripted_model"


class ScriptedModel:
    """A Responses API model that plays a plan: its tool calls one per turn, then its answer."""

    def __init__(self) -> None:
        self.plan: dict[str, Any] = {}
        self.seen_outputs: list[str] = []  # the tool outputs the agent brought back from egym
        self.offered: list[str] = []  # the function names the row offered

    def app(self) -> FastAPI:
        app = FastAPI()
        app.post("/v1/responses")(self.responses)
        return app

    async def responses(self, request: Request) -> dict[str, Any]:
        body = NeMoGymResponseCreateParamsNonStreaming.model_validate(await request.json())
        self.offered = [tool["name"] for tool in body.tools]
        items = [i if isinstance(i, dict) else i.model_dump() for i in body.input]
        outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
        self.seen_outputs = outputs
        calls = self.plan["calls"]
        if len(outputs) < len(calls):
            name, arguments = calls[len(outputs)]
            item: Any = NeMoGymResponseFunctionToolCall(
                call_id=f"call-{len(outputs)}", name=name, arguments=json.dumps(arguments)
            )
        else:
            text = NeMoGymResponseOutputText(text=self.plan["answer"], annotations=[])
            item = NeMoGymResponseOutputMessage(id=f"msg-{uuid.uuid4().hex[:8]}", content=[text])
        return response([item]).model_dump()


def response(output: list[Any]) -> NeMoGymResponse:
    return NeMoGymResponse(
        id=f"resp-{uuid.uuid4().hex[:8]}",
        created_at=time.time(),
        model="scripted",
        object="response",
        output=output,
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def global_config(egym_url: str, agent_port: int, model_port: int) -> dict[str, Any]:
    """The config NeMo Gym's head server would hand out: egym as a resources server, running already."""
    egym = urlparse(egym_url)
    refs = {
        "resources_server": {"type": "resources_servers", "name": EGYM},
        "model_server": {"type": "responses_api_models", "name": MODEL},
    }
    return {
        # No entrypoint: ng_run starts no process for it (egym serves it), agents reach it by host and port.
        EGYM: {"resources_servers": {"egym": {"host": egym.hostname, "port": egym.port}}},
        AGENT: {
            "responses_api_agents": {
                "simple_agent": {"host": "127.0.0.1", "port": agent_port, "entrypoint": "app.py", **refs}
            }
        },
        MODEL: {"responses_api_models": {"scripted": {"host": "127.0.0.1", "port": model_port}}},
    }


async def serve(app: FastAPI, port: int) -> uvicorn.Server:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    asyncio.get_running_loop().create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    return server


async def answer(response_or_error: Any) -> dict[str, Any]:
    """An HTTP answer as {status, json}."""
    return {"status": response_or_error.status, "json": await get_response_json(response_or_error)}


async def main(egym_url: str, plan: dict[str, Any]) -> dict[str, Any]:
    set_global_aiohttp_client(GlobalAIOHTTPAsyncClientConfig())
    agent_port, model_port = free_port(), free_port()
    config = OmegaConf.create(global_config(egym_url, agent_port, model_port))
    client = ServerClient(
        head_server_config=BaseServerConfig(host="127.0.0.1", port=1), global_config_dict=config
    )
    agent_config = SimpleAgentConfig.model_validate(
        OmegaConf.to_container(config[AGENT]["responses_api_agents"]["simple_agent"])
        | {"name": AGENT, "max_steps": 8}
    )
    model = ScriptedModel()
    servers = [
        await serve(SimpleAgent(config=agent_config, server_client=client).setup_webserver(), agent_port),
        await serve(model.app(), model_port),
    ]
    results: dict[str, Any] = {}
    try:
        listed = await client.get(EGYM, f"/rows?agent={AGENT}")
        await raise_for_status(listed)
        text = (await listed.read()).decode()
        rows = {r["egym_task"]: r for r in map(json.loads, text.splitlines())}
        for item in rows.values():
            SimpleAgentRunRequest.model_validate(item)  # NeMo Gym takes egym's rows as they are
        results["rows"] = rows

        # Rollouts as ng_collect_rollouts runs them: POST /run to the agent, which talks to egym.
        results["runs"] = []
        for run in plan["runs"]:
            model.plan = run
            started = time.monotonic()
            done = await client.post(AGENT, "/run", json=rows[run["task"]])
            await raise_for_status(done)
            body = await get_response_json(done)
            BaseVerifyResponse.model_validate(body)
            SimpleAgentVerifyResponse.model_validate(body)
            results["runs"].append(
                {
                    "seconds": time.monotonic() - started,
                    "verify": body,
                    "offered": model.offered,
                    "tool_outputs": model.seen_outputs,
                }
            )

        results["direct"] = await direct(client, rows[plan["direct"]["task"]], plan["direct"])
        results["unknown_task"] = await unknown_task(
            client, rows[plan["runs"][0]["task"]], plan["unknown_task"]
        )

        stripped = [
            {k: v for k, v in run["verify"].items() if k not in ("response", "responses_create_params")}
            | {"_ng_task_index": index}
            for index, run in enumerate([*results["runs"], {"verify": results["direct"]["verify"]}])
        ]
        metrics = await client.post(
            AGENT, "/aggregate_metrics", json=AggregateMetricsRequest(verify_responses=stripped)
        )
        await raise_for_status(metrics)
        results["metrics"] = AggregateMetrics.model_validate(await get_response_json(metrics)).model_dump()
    finally:
        for server in servers:
            server.should_exit = True
        await asyncio.sleep(0.3)
    return results


async def direct(client: ServerClient, row: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The agent's steps one by one on the same ServerClient, with the cookies as the agent passes them."""
    out: dict[str, Any] = {}
    seeded = await client.post(
        EGYM, "/seed_session", json=SimpleAgentRunRequest.model_validate(row).model_dump()
    )
    await raise_for_status(seeded)
    cookies, items, timings = seeded.cookies, [], []
    for index, (name, arguments) in enumerate(run["calls"]):
        started = time.monotonic()
        called = await client.post(EGYM, f"/{name}", json=arguments, cookies=cookies)
        timings.append(time.monotonic() - started)
        cookies = called.cookies
        items.append(
            NeMoGymResponseFunctionToolCall(call_id=f"c{index}", name=name, arguments=json.dumps(arguments))
        )
        out.setdefault("tool_outputs", []).append(
            {"status": called.status, "text": (await called.read()).decode()}
        )
    # A second round of the first call: the per-call cost once the episode is up.
    name, arguments = run["calls"][0]
    for _ in range(20):
        started = time.monotonic()
        called = await client.post(EGYM, f"/{name}", json=arguments, cookies=cookies)
        await called.read()
        timings.append(time.monotonic() - started)
        cookies = called.cookies
    out["call_seconds"] = timings
    text = NeMoGymResponseOutputText(text=run["answer"], annotations=[])
    items.append(NeMoGymResponseOutputMessage(id="msg-direct", content=[text]))
    body = SimpleAgentRunRequest.model_validate(row).model_dump() | {"response": response(items).model_dump()}
    verified = await client.post(EGYM, "/verify", json=body, cookies=cookies)
    await raise_for_status(verified)
    out["verify"] = await get_response_json(verified)
    BaseVerifyResponse.model_validate(out["verify"])
    again = await client.post(EGYM, "/verify", json=body, cookies=verified.cookies)
    out["verify_again"] = await answer(again)
    out["call_after_verify"] = await answer(
        await client.post(EGYM, f"/{name}", json=arguments, cookies=cookies)
    )
    out["call_without_session"] = await answer(await client.post(EGYM, f"/{name}", json=arguments))
    return out


async def unknown_task(client: ServerClient, row: dict[str, Any], key: str) -> dict[str, Any]:
    """An unknown task: a 404 from egym's seed_session, and a failed /run through the agent."""
    bad = row | {"egym_task": key}
    seeded = await client.post(EGYM, "/seed_session", json=bad)
    out = {"seed": await answer(seeded)}
    try:
        await raise_for_status(seeded)
    except ClientResponseError as error:  # how the agent sees it
        out["raised"] = error.status
    out["run_status"] = (await client.post(AGENT, "/run", json=bad)).status
    return out


if __name__ == "__main__":
    results = asyncio.run(main(sys.argv[1], json.load(sys.stdin)))
    with open(sys.argv[2], "w") as out:  # not stdout: servers and NeMo Gym print there
        json.dump(results, out)
