"""`egym models`: the local models egym can run (`--policy hf --model NAME`)."""

from __future__ import annotations

import typer

from gym.cli.errors import friendly
from gym.cli.options import HOST

models_app = typer.Typer(
    help="Local models: import the bundled SmolLM2 or a GGUF file, list what is there.", no_args_is_help=True
)


@models_app.command("import")
@friendly
def import_(
    ref: str = typer.Argument("smollm2", help="A bundled model (smollm2) or a .gguf file."),
    force: bool = typer.Option(False, "--force", help="Convert again even if the folder exists."),
) -> None:
    """Turn a GGUF model into a transformers folder under .egym/models (dequantised, float32)."""
    from rich.console import Console

    from gym.models.store import import_model

    console = Console()
    with console.status(f"importing {ref} (about half a minute for SmolLM2)…"):
        folder = import_model(ref, force=force)
    console.print(f"{ref}: {folder}  (use: --policy hf --model {ref})")


@models_app.command("list")
@friendly
def list_() -> None:
    """The model folders under .egym/models (or $EGYM_MODELS) and the bundled names."""
    from gym.models.store import BUNDLED, list_models, models_dir

    folders = list_models()
    for folder in folders:
        size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) / 2**20
        typer.echo(f"{folder.name}\t{size:.0f} MB\t{folder}")
    if not folders:
        typer.echo(f"no models under {models_dir()}")
    typer.echo("bundled: " + ", ".join(f"{name} ({entry.folder})" for name, entry in BUNDLED.items()))


@models_app.command("serve")
@friendly
def serve(
    ref: str = typer.Argument("smollm2", help="A bundled model (smollm2), a model folder or a .gguf file."),
    host: str = HOST,
    port: int = typer.Option(8000, "--port", help="TCP port to listen on."),
    max_tokens: int = typer.Option(
        512, "--max-tokens", min=1, help="Completion length when a request sets no max_tokens."
    ),
    device: str | None = typer.Option(
        None, "--device", help="cpu, cuda, cuda:1, ...; default: the GPU when there is one, else the CPU."
    ),
) -> None:
    """Serve a local model over OpenAI's chat API (/v1/chat/completions, /v1/models), as the hf policy runs it."""
    import uvicorn

    from gym.cli.errors import stderr
    from gym.interop.openai_server import OpenAIServer

    server = OpenAIServer(ref, name=ref, max_tokens=max_tokens, device=device)
    stderr.print(
        f"egym model {ref!r} on http://{host}:{port}/v1 (OpenAI chat completions); Ctrl-C to stop",
        highlight=False,
    )
    uvicorn.run(server.app(), host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")
