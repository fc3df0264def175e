"""The table the rules tests (issue 34) hold every surface to: per fixture
repository, the prefix text and what each primitive delivers just in time
in a fresh session (path, and whether it came with content)."""

from __future__ import annotations


def block(path: str, what: str, *lines: str) -> str:
    return f"==> {path} ({what}) <==\n" + "".join(line + "\n" for line in lines)


ROOT = "instructions for the whole repository"

PREFIX = {
    "rules_claude": "\n".join(
        [
            block(
                "CLAUDE.md",
                ROOT,
                "# Claude instructions",
                "",
                "Follow the conventions in @docs/conventions.md before editing.",
                "Never read @~/.claude/personal.md or @../outside.md from here.",
                "Thanks to @alice for the setup (a mention, not a file).",
                "`@docs/not-an-import.md` is in a code span.",
            ),
            block("docs/conventions.md", "imported by CLAUDE.md", "# Conventions", "", "- Tabs, not spaces. See also @more.md"),
            block("docs/more.md", "imported by docs/conventions.md", "# More conventions", "", "- Back to the start: @../CLAUDE.md (a cycle, loaded once)."),
            block(".claude/rules/general.md", "Claude Code rule, always applied", "# General rule", "", "Write small commits."),
        ]
    ),
    "rules_cursor": "\n".join(
        [
            block(".cursor/rules/style.mdc", "Cursor rule, always applied", "# House style", "", "Prefer early returns."),
            block(".cursorrules", "Cursor rule, always applied", "# Legacy cursor rules", "", "Answer in English."),
            block(
                "rules to read when they apply",
                "read one with head path=PATH",
                "- .cursor/rules/db.mdc (Cursor, 9 tokens): Database migrations and schema changes",
                "- .cursor/rules/manual.mdc (Cursor, 10 tokens): no description: read it when you are asked to",
            ),
        ]
    ),
    "rules_copilot": "\n".join(
        [
            block(".github/copilot-instructions.md", "GitHub Copilot rule, always applied", "# Copilot instructions", "", "Use type hints everywhere."),
            block(".github/instructions/everything.instructions.md", "GitHub Copilot rule, always applied", "# Everywhere", "", "Write tests first."),
            block(
                "rules to read when they apply",
                "read one with head path=PATH",
                "- .github/instructions/review.instructions.md (GitHub Copilot, 8 tokens): How to review a pull request",
            ),
        ]
    ),
    "rules_windsurf": "\n".join(
        [
            block(".windsurf/rules/always.md", "Windsurf rule, always applied", "# Always (Windsurf)", "", "Explain the plan before editing."),
            block(".windsurfrules", "Windsurf rule, always applied", "# Legacy Windsurf rules", "", "Be brief."),
            block(
                "rules to read when they apply",
                "read one with head path=PATH",
                "- .windsurf/rules/deploy.md (Windsurf, 10 tokens): Deploying to production",
                "- .windsurf/rules/manual.md (Windsurf, 11 tokens): no description: read it when you are asked to",
            ),
        ]
    ),
    "rules_cline": block(".clinerules/01-general.md", "Cline rule, always applied", "# General (Cline)", "", "Small functions."),
    "rules_all": "\n".join(
        [
            block("AGENTS.md", ROOT, "# Shared agent instructions", "", "Run `make check` before every commit. Style: @docs/style.md"),
            block("docs/style.md", "imported by AGENTS.md", "# Style", "", "Line length 100."),
            block(".cursor/rules/always.mdc", "Cursor rule, always applied", "# Be kind", "", "Review comments are suggestions."),
            block(
                "rules to read when they apply",
                "read one with head path=PATH",
                "- .windsurf/rules/security.md (Windsurf, 7 tokens): Security review of authentication code",
            ),
            block("README.md", "project README", "# rules_all", "", "Every agent's format in one repository."),
        ]
    ),
}

# the files the prefix shows, with why (duplicates by text are listed, not shown)
FILES = {
    "rules_all": [
        ("AGENTS.md", "included"),
        ("docs/style.md", "included"),
        (".cursor/rules/always.mdc", "included"),
        (".github/copilot-instructions.md", "duplicate"),
        (".clinerules", "duplicate"),
        ("README.md", "included"),
    ],
}

ALL_SVC = [("svc/GEMINI.md", True), (".claude/rules/py.md", True), (".github/instructions/svc.instructions.md", True)]

# (fixture, tool, arguments) -> the instructions a fresh session gets: (path, with content)
CALLS = [
    ("rules_claude", "glob", {"pattern": "src/**"}, [(".claude/rules/api.md", False)]),
    ("rules_claude", "glob", {"pattern": "*.md"}, [(".claude/rules/root-md.md", False)]),  # rooted: CLAUDE.md only
    ("rules_claude", "head", {"path": "docs/conventions.md"}, []),  # '*.md' is the root's, for Claude Code
    ("rules_claude", "head", {"path": "pkg/lib.py"}, [("pkg/CLAUDE.md", True), ("pkg/notes.md", True)]),
    ("rules_cursor", "glob", {"pattern": "src/ui/*"}, [(".cursor/rules/frontend/tsx.mdc", False)]),
    ("rules_cursor", "head", {"path": "lib/util.py"}, [(".cursor/rules/quoted.mdc", True)]),  # alwaysApply "true" is a string
    ("rules_cursor", "grep", {"pattern": "CREATE"}, []),  # the db rule is on request
    ("rules_copilot", "head", {"path": "app/main.py"}, [(".github/instructions/lang/python.instructions.md", True)]),
    ("rules_copilot", "glob", {"pattern": "web/*"}, [(".github/instructions/web.instructions.md", False)]),
    ("rules_windsurf", "grep", {"pattern": "func"}, [(".windsurf/rules/go.md", False)]),
    ("rules_windsurf", "glob", {"pattern": "deploy/*"}, []),
    ("rules_cline", "tail", {"path": "tests/test_x.py"}, [(".clinerules/02-tests.md", True)]),
    ("rules_cline", "head", {"path": "src/x.py"}, []),
    ("rules_all", "head", {"path": "svc/api.py"}, ALL_SVC),  # the cursor copy of py.md comes once, as py.md
    ("rules_all", "tail", {"path": "svc/api.py"}, ALL_SVC),
    ("rules_all", "grep", {"pattern": "serve"}, [(p, False) for p, _ in ALL_SVC]),
    ("rules_all", "outline", {"path": "svc/api.py"}, [(p, False) for p, _ in ALL_SVC]),
    ("rules_all", "symbols", {"query": "serve"}, [(p, False) for p, _ in ALL_SVC]),
    ("rules_all", "locate", {"task": "where is serve defined"}, [(p, False) for p, _ in ALL_SVC]),
    ("rules_all", "glob", {"pattern": "web/*"}, []),
]

FIXTURES = sorted(PREFIX)


def delivered(instructions: list[dict]) -> list[tuple[str, bool]]:
    """The table's form of a result's ``instructions``."""
    return [(i["path"], i.get("content") is not None) for i in instructions]
