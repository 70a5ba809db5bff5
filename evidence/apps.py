from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    label = "evidence"
    verbose_name = "Evidence"
