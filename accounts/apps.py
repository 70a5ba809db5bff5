from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from access.policy import mfa_rule_register

        from .mfa import mfa_satisfied

        mfa_rule_register(mfa_satisfied)  # the policy asks the rule; access may not import accounts
