from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Calibration"

    def ready(self) -> None:
        from annotations.signals import assignment_finished

        from .adjudication.notifications import on_assignment_finished

        assignment_finished.connect(on_assignment_finished, dispatch_uid="calibration-adjudication-notice")

        # each kind of evidence.Snapshot that calibration computes registers its builder and renderers (on
        # import); a study's snapshots name it by id, so deleting it is refused like a PROTECT
        from evidence.models import Snapshot
        from evidence.services import subject_protect

        from .calibrated import snapshots as calibrated_snapshots  # noqa: F401
        from .models import Study
        from .reports import snapshots as report_snapshots  # noqa: F401
        from .studies import snapshots as study_snapshots  # noqa: F401
        from .validation import store  # noqa: F401

        subject_protect(kind=Snapshot.Kind.STUDY_REPORT, sender=Study)
