"""Software and services known by name, in one table: entity spotting reads the names, the profile slots read the
slot each one fills when the user says they use it (Postgres fills `project:database`; Python fills none).

A new tool is one line here, under the slot it fills. A name that is also an everyday word or a given name goes in
EVERYDAY_WORDS as well: in running text it names the tool only with its capital.
"""

from __future__ import annotations

from hermes_bowerbird import vocabulary as vocab

_BY_SLOT: dict[str | None, tuple[str, ...]] = {
    vocab.DATABASE: (
        "postgres",
        "postgresql",
        "mysql",
        "mariadb",
        "sqlite",
        "mongodb",
        "redis",
        "dynamodb",
        "supabase",
        "firebase",
        "snowflake",
        "bigquery",
    ),
    vocab.FRONTEND_FRAMEWORK: ("react", "vue", "svelte", "angular", "next.js", "nextjs"),
    vocab.BACKEND_FRAMEWORK: ("django", "flask", "fastapi", "rails", "spring", "express"),
    vocab.HOSTING: (
        "aws",
        "gcp",
        "azure",
        "heroku",
        "vercel",
        "netlify",
        "fly.io",
        "cloudflare",
        "digitalocean",
        "render",
    ),
    vocab.TEST_FRAMEWORK: ("pytest", "unittest", "jest", "mocha", "vitest"),
    vocab.PACKAGE_MANAGER: ("npm", "pnpm", "yarn", "pip", "poetry", "uv", "conda"),
    vocab.CI: (
        "github actions",
        "jenkins",
        "circleci",
        "gitlab ci",
        "travis",
        "buildkite",
        "teamcity",
    ),
    vocab.ISSUE_TRACKER: (
        "jira",
        "linear",
        "youtrack",
        "trello",
        "asana",
        "clickup",
        "bugzilla",
        "redmine",
        "github issues",
        "gitlab issues",
    ),
    vocab.EDITOR: (
        "vim",
        "neovim",
        "emacs",
        "vscode",
        "vs code",
        "pycharm",
        "intellij",
        "xcode",
        "zed",
        "sublime",
    ),
    vocab.CHAT_APP: ("slack", "discord", "telegram", "whatsapp", "signal", "teams"),
    vocab.NOTES_APP: ("notion", "obsidian", "evernote", "logseq", "onenote"),
    vocab.BROWSER: ("chrome", "firefox", "safari", "brave", "vivaldi"),
    vocab.OPERATING_SYSTEM: (
        "linux",
        "ubuntu",
        "fedora",
        "debian",
        "arch",
        "macos",
        "windows",
        "chromeos",
    ),
    vocab.MUSIC_APP: ("spotify", "apple music", "tidal", "deezer", "youtube music"),
    vocab.EMAIL: ("gmail", "outlook", "fastmail", "proton mail", "protonmail"),
    vocab.PASSWORD_MANAGER: ("1password", "bitwarden", "lastpass", "keepass", "dashlane"),
    vocab.PHONE: ("iphone", "android"),
    None: (
        # languages and shells
        "python",
        "javascript",
        "typescript",
        "rust",
        "golang",
        "java",
        "kotlin",
        "swift",
        "ruby",
        "php",
        "c++",
        "c#",
        "haskell",
        "elixir",
        "scala",
        "bash",
        "zsh",
        # infrastructure and runtimes
        "docker",
        "podman",
        "kubernetes",
        "k8s",
        "helm",
        "terraform",
        "ansible",
        "elasticsearch",
        "kafka",
        "rabbitmq",
        "nginx",
        "apache",
        "node",
        "node.js",
        "nodejs",
        "deno",
        "bun",
        "graphql",
        "sqlalchemy",
        "airflow",
        "spark",
        "dbt",
        # code hosting, checks, builds, monitoring
        "git",
        "github",
        "gitlab",
        "bitbucket",
        "mypy",
        "ruff",
        "black",
        "webpack",
        "vite",
        "tailwind",
        "prometheus",
        "grafana",
        "sentry",
        "datadog",
        # data and machine learning
        "pytorch",
        "tensorflow",
        "numpy",
        "pandas",
        "jupyter",
        "sklearn",
        "scikit-learn",
        # models and assistants
        "openai",
        "anthropic",
        "gemini",
        "claude",
        "chatgpt",
        "gpt-4",
        "llama",
        "ollama",
        "hermes",
        "alexa",
        # everyday apps and services
        "ios",
        "zoom",
        "figma",
        "excel",
        "sheets",
        "stripe",
        "twilio",
        "instagram",
        "twitter",
        "linkedin",
        "facebook",
        "youtube",
        "autocad",
        "revit",
        "sketchup",
        "photoshop",
    ),
}

SLOT_OF: dict[str, str] = {
    name: slot for slot, names in _BY_SLOT.items() if slot is not None for name in names
}
"""The profile slot a tool fills when the user says they use it."""

KNOWN_TOOLS: frozenset[str] = frozenset(name for names in _BY_SLOT.values() for name in names)
"""Every tool name, lower case."""

EVERYDAY_WORDS: frozenset[str] = frozenset(
    {
        "arch",
        "black",
        "brave",
        "bun",
        "express",
        "jest",
        "linear",
        "mocha",
        "node",
        "outlook",
        "poetry",
        "rails",
        "render",
        "safari",
        "sheets",
        "signal",
        "spark",
        "spring",
        "sublime",
        "teams",
        "tidal",
        "travis",
        "windows",
        "yarn",
    }
)
"""Tool names that are also everyday words or given names, and read as such far more often in chat than as the tool:
in running text, the tool only with its capital ("Signal", "Poetry"; not "a signal", "I love poetry", "washing the
windows"). Names chat writes in lower case for the tool itself ("python", "slack", "docker") are not here."""

CHOSEN_ONLY_WITH_A_CAPITAL: frozenset[str] = frozenset({"linear", "teams", "express", "render"})
"""Of those, the words that follow "we use" / "switched to" as plainly as the tool does ("we use linear
regression", "we use teams of two", "switched to express shipping"): only the capital sets the profile slot. The
rest set it in lower case too ("i switched to signal", "we use black")."""

DISPLAY: dict[str, str] = {"k8s": "Kubernetes", "c++": "C++", "c#": "C#"}
"""How a tool written in lower case is shown when its name alone would read wrongly."""
