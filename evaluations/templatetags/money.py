"""`{{ amount|money }}`: an amount with its currency (FAITHBENCH_CURRENCY, default USD)."""
from __future__ import annotations

from typing import Any

from django import template

from ..judge.config import money as money_text

register = template.Library()


@register.filter
def money(amount: Any) -> str:
    return money_text(amount)
