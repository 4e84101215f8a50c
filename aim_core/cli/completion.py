"""``aim-engine completion bash|zsh|fish``: a shell completion script, made from the parser itself.

Every command, subcommand, option and option choice is completed, so the scripts follow the
parser as it changes. Paths are left to the shell's own file completion.
"""

from __future__ import annotations

import argparse
import sys

from aim_core.cli.common import command_parser

SHELLS = ("bash", "zsh", "fish")


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "completion",
        "print a shell completion script (bash, zsh or fish)",
        [
            "source <(aim-engine completion bash)                    # bash, this shell",
            "aim-engine completion bash > /etc/bash_completion.d/aim-engine",
            "echo 'source <(aim-engine completion zsh)' >> ~/.zshrc   # zsh",
            "aim-engine completion fish > ~/.config/fish/completions/aim-engine.fish",
        ],
        codes="Exit status: 0 printed; 2 bad usage.",
    )
    p.add_argument("shell", choices=SHELLS, metavar="|".join(SHELLS), help="the shell: " + ", ".join(SHELLS))
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    tree = walk(args.root_parser)  # the whole command line, set by aim_core.cli.build_parser
    sys.stdout.write({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](tree))
    return 0


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], dict]:
    """For each command path (``()``, ``("bench",)``, ``("bench", "show")``): its options, choices and subcommands."""
    node: dict = {"options": [], "choices": {}, "commands": {}, "help": {}}
    for action in parser._actions:
        if action.help == argparse.SUPPRESS and action.option_strings:
            continue
        for opt in action.option_strings:
            node["options"].append(opt)
            node["help"][opt] = (action.help or "").split(";")[0][:80]
            if action.choices and not isinstance(action, argparse._SubParsersAction):
                node["choices"][opt] = [str(c) for c in action.choices]
    tree = {path: node}
    sub = _subparsers(parser)
    if sub is not None:
        helps = {a.dest: a.help or "" for a in sub._choices_actions}
        for name, child in sub.choices.items():
            node["commands"][name] = helps.get(name, "")
            tree.update(walk(child, (*path, name)))
    return tree


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def bash(tree: dict) -> str:
    cases = []
    for path, node in tree.items():
        key = " ".join(path)
        choice_cases = "".join(
            f'                {opt}) COMPREPLY=($(compgen -W {_quote(" ".join(ch))} -- "$cur")); return;;\n'
            for opt, ch in node["choices"].items()
        )
        cases.append(
            f"        {_quote(key)})\n"
            f'            case "$prev" in\n{choice_cases}            esac\n'
            f"            commands={_quote(' '.join(node['commands']))}; options={_quote(' '.join(node['options']))};;\n"
        )
    return f"""# bash completion for aim-engine (aim-engine completion bash)
_aim_engine() {{
    local cur prev path commands options i w
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    path=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${{COMP_WORDS[i]}}"
        case "$w" in -*) continue;; esac
        if _aim_engine_is_command "${{path:+$path }}$w"; then path="${{path:+$path }}$w"; fi
    done
    commands=""
    options=""
    case "$path" in
{"".join(cases)}    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif [[ -n "$commands" ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
_aim_engine_is_command() {{
    case "$1" in
        {"|".join(_quote(" ".join(p)) for p in tree if p) or "''"}) return 0;;
    esac
    return 1
}}
complete -o filenames -F _aim_engine aim-engine
"""


def zsh(tree: dict) -> str:
    return (
        "# zsh completion for aim-engine: source <(aim-engine completion zsh), e.g. in ~/.zshrc. The bash\n"
        "# script through zsh's bashcompinit, which reads complete -F\n"
        "autoload -U +X bashcompinit && bashcompinit\n" + bash(tree)
    )


def fish(tree: dict) -> str:
    lines = ["# fish completion for aim-engine (aim-engine completion fish)", "complete -c aim-engine -f"]
    for path, node in tree.items():
        if path:
            parents = " ".join(path[:-1])
            cond = (
                "__fish_use_subcommand"
                if len(path) == 1
                else f"__fish_seen_subcommand_from {path[-2]}; and not __fish_seen_subcommand_from "
                + " ".join(tree[path[:-1]]["commands"])
            )
            del parents
            lines.append(
                f"complete -c aim-engine -n {_quote(cond)} -a {path[-1]} -d {_quote(tree[path[:-1]]['commands'][path[-1]][:60])}"
            )
        cond = (
            "not __fish_seen_subcommand_from " + " ".join(tree[()]["commands"])
            if not path
            else (f"__fish_seen_subcommand_from {path[-1]}")
        )
        for opt in node["options"]:
            flag = f"-l {opt[2:]}" if opt.startswith("--") else f"-s {opt[1:]}"
            choices = node["choices"].get(opt)
            extra = (
                f" -x -a {_quote(' '.join(choices))}"
                if choices
                else " -r -F"
                if opt in ("-f", "--filename", "--nodes", "--kubeconfig", "--svg")
                else ""
            )
            lines.append(
                f"complete -c aim-engine -n {_quote(cond)} {flag}{extra} -d {_quote(node['help'].get(opt, '')[:60])}"
            )
    return "\n".join(lines) + "\n"
