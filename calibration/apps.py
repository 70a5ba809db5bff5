from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Calibration"

    def ready(self) -> None:
        from annotations.signals import assignment_finished

        from .adjudication.notifications import on_assignment_finished

        assignment_finished.connect(on_assignment_finished, dispatch_uid="calibration-adjudication-notice")
