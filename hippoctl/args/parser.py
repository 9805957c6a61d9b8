"""hippoctl's argument parser: argparse with one-line usage errors that name the closest known word.

A mistyped verb, action or option is one line (`did you mean ...`), raised as a UsageError (exit 2)
before the daemon is contacted; `command.py` builds the verbs on it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from hippoctl.args.argcheck import MemoryId, Number, UsageError, did_you_mean, unknown_option
from hippoctl.args.argv import verb_index

# Verbs without the reply-as-JSON switch: `help` prints help, `watch` streams its command's output and
# `mcp` speaks JSON-RPC on stdio.
NO_JSON_VERBS = frozenset({"help", "watch", "mcp"})


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors, `did you mean` for a mistyped word, and examples in --help.

    The examples are plain constants kept on the parser; they are formatted only when help is shown.
    """

    def __init__(self, *args: Any, examples: Sequence[str] = (), **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        if sys.version_info >= (3, 14):
            # argparse colours its help there by its own rules (FORCE_COLOR, PYTHON_COLORS); ours apply.
            from hippoctl import colour

            kwargs.setdefault("color", colour.enabled(sys.stdout))
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)
        self.verb_parsers: dict[str, Parser] = {}

    def format_help(self) -> str:
        if self.examples and self.epilog is None:
            self.epilog = "examples:\n" + "\n".join(f"  {line}" for line in self.examples)
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse's own message lists every choice: every verb, for a mistyped one.
        if action.choices is None or value in action.choices:
            return
        names = [str(choice) for choice in action.choices]
        if isinstance(action, argparse._SubParsersAction):
            raise UsageError(not_a_verb(str(value), names))
        where = self.prog.removeprefix("hippoctl").strip()
        label = action.option_strings[0] if action.option_strings else f"{where}: {action.dest}"
        raise UsageError(
            f"{label} {value!r} is not one of {', '.join(names)}{did_you_mean(str(value), names)}"
        )

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        # A numeric option's own message names the option and its range (argcheck.Number), and an
        # empty memory id is refused in the same words for every verb (argcheck.MemoryId).
        flag = action.option_strings[0] if action.option_strings else None
        if isinstance(action.type, Number):
            return action.type.parse(arg_string, flag or str(action.metavar or action.dest))
        if isinstance(action.type, MemoryId):
            return action.type.parse(arg_string, flag)
        return super()._get_value(action, arg_string)

    def parse(self, argv: Sequence[str]) -> argparse.Namespace:
        """parse_args, with one line naming an unknown option (and the closest known one).

        An unknown option before the verb is reported before the verb is looked for: its value would
        otherwise be taken for the verb (`--tmeout 3 status` is not the verb `3`).
        """
        verb_at = verb_index(argv)
        unknown = self.unknown_option_in(argv[:verb_at])
        if unknown is not None:
            raise UsageError(unknown)
        try:
            args, extras = self.parse_known_args(argv)
        except UsageError:
            # A verb's unknown option can leave a required argument unfilled; name the option.
            verb = argv[verb_at] if verb_at < len(argv) else None
            parser = self.verb_parsers.get(verb) if verb is not None else None
            unknown = parser.unknown_option_in(argv[verb_at + 1 :]) if parser is not None else None
            if unknown is not None:
                raise UsageError(unknown) from None
            raise
        if extras:
            verb = getattr(args, "verb", None)
            if "--json" in extras and verb in NO_JSON_VERBS:
                raise UsageError(no_json(str(verb)))
            parser = self.verb_parsers.get(verb, self) if isinstance(verb, str) else self
            unknown = parser.unknown_option_in(extras)
            if unknown is not None:
                raise UsageError(unknown)
            many = "s" if len(extras) > 1 else ""
            raise UsageError(f"unexpected argument{many}: {' '.join(extras)}")
        return args

    def unknown_option_in(self, words: Sequence[str]) -> str | None:
        """The error for the first word that looks like an option this parser does not take, or None.

        A word argparse would take as an abbreviation of one option (`--lim` for --limit) is known,
        and so is anything after `--` or a value an option takes (`--scope -x`).
        """
        options = {o: a for a in self._actions for o in a.option_strings}
        skip = False
        for word in words:
            if skip:
                skip = False
                continue
            if word == "--":
                return None
            if not word.startswith("-") or word == "-" or self._negative_number_matcher.match(word):
                continue
            flag = word.split("=", 1)[0]
            if not word.startswith("--") and len(word) > 2 and word[:2] in options:
                continue  # `-C/tmp`: a short option with its value attached
            known = options.get(flag)
            if known is None and flag.startswith("--"):
                # argparse takes the start of one option's name for the option (`--lim` for --limit).
                meant = {id(a): a for o, a in options.items() if o.startswith(flag)}
                if len(meant) > 1:
                    continue  # ambiguous: argparse names the candidates
                known = next(iter(meant.values()), None)
            if known is None:
                return unknown_option(word, options)
            skip = known.nargs != 0 and "=" not in word
        return None


def no_json(verb: str) -> str:
    """The one-line error for --json on a verb that prints no JSON."""
    return f"{verb} has no JSON output; leave out --json"


def not_a_verb(word: str, verbs: Iterable[str]) -> str:
    """The one-line error for a word that names none of `verbs`."""
    hint = did_you_mean(word, sorted(verbs))
    return f"unknown verb {word!r}{hint}" if hint else f"unknown verb {word!r} (hippoctl --help lists them)"
