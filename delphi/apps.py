from django.apps import AppConfig


class DelphiConfig(AppConfig):
    name = "delphi"
    verbose_name = "Delphi studies"
