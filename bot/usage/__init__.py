"""Usage and budgets: what every model call cost (tokens, money), shown where people look and
limited before it surprises anyone. docs/usage.md.

- `config.py`: the `usage:` section (currency, the footer, budgets, the fallback model);
- `prices.py`: a call's cost (a model's configured `price`, else the genai-prices table);
- `meter.py`: the agent's usage sink: records → the usage store, run totals, metrics;
- `budgets.py`: budgets checked before a run and before each model call of it;
- `gate.py`: what the turn runner asks (a run's verdict, the footer);
- `command.py`: `/usage`.
"""
