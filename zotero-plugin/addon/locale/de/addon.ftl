## Zeichenketten, die der Code (Localization in src/) und das Hauptfenster verwenden.

zocrates-addon-name = Zocrates

## Die Fehler des Gateways (src/errors.js describeError), als Hinweise im Bereich und in den
## Einstellungen angezeigt. $url ist die Gateway-Adresse, $path die Token-Datei, $status ein
## HTTP-Status, $server, was das Gateway gesagt hat. Text in `Backticks` wird als Code angezeigt.

zocrates-error-gateway-down = Zocrates läuft nicht: Starten Sie es mit `make run` in Ihrem Zocrates-Ordner und versuchen Sie es dann erneut (unter { $url } hat nichts geantwortet).
zocrates-error-token-missing = Kein Gateway-Token unter { $path }: Starten Sie Zocrates mit `make run` für dieses Zotero-Datenverzeichnis (es schreibt das Token beim Start dorthin) und versuchen Sie es dann erneut.
zocrates-error-unauthorized = Zocrates hat die Anfrage abgelehnt, falsches Token: Das Plugin liest { $path }, das das Gateway beim Start schreibt. Starten Sie Zocrates (`make run`) für dieses Zotero-Datenverzeichnis neu; wenn Sie ZOCRATES_GATEWAY_TOKEN gesetzt haben, muss diese Datei dasselbe Token enthalten.
# Folgt auf zocrates-error-unauthorized, wenn das Gateway einen Grund genannt hat.
zocrates-error-gateway-said = (Das Gateway meldete: { $server })
zocrates-error-host-not-allowed = Zocrates beantwortet nur lokale Anfragen: Stellen Sie in den Einstellungen von Zocrates als Gateway-URL http://127.0.0.1 oder http://localhost mit seinem Port ein (derzeit { $url }).
zocrates-error-session-busy = Dieser Chat bearbeitet noch eine andere Anfrage. Warten Sie, bis sie abgeschlossen ist (oder stoppen Sie sie), und versuchen Sie es dann erneut.
zocrates-error-checkpoint-pending = Dieser Chat ist an einem Deep-Research-Kontrollpunkt angehalten. Beantworten Sie zuerst die Karte – gewähren Sie eine Erweiterung oder lassen Sie mit den bisher gefundenen Belegen antworten – oder verwerfen Sie diese Runde, bevor Sie etwas Neues fragen.
zocrates-error-stale-interrupt = Dieser Kontrollpunkt wurde bereits beantwortet oder verworfen (vielleicht in einem anderen Fenster). Laden Sie den Chat neu, um den aktuellen Stand zu sehen.
zocrates-error-session-not-found = Dieser Chat existiert nicht mehr (er wurde gelöscht oder durch die Aufbewahrungseinstellungen entfernt). Wählen Sie einen anderen Chat oder beginnen Sie einen neuen.
zocrates-error-stream-interrupted = Die Verbindung zu Zocrates wurde unterbrochen, bevor die Antwort fertig war. Laden Sie den Chat neu, um zu sehen, was gespeichert wurde.
zocrates-error-bad-response = Zocrates hat eine Antwort gesendet, die das Plugin nicht lesen konnte (HTTP { $status }).
zocrates-error-http-status = Zocrates hat mit HTTP { $status } geantwortet.
zocrates-error-failed = Bei Zocrates ist ein Fehler aufgetreten.

## Das Hauptfenster: Menü „Ansicht“ und die Leiste, die einen ausgeblendeten Bereich wieder anzeigt.

zocrates-menu-view-pane =
    .label = Zocrates-Bereich
    .accesskey = Z
zocrates-rail-show =
    .title = Zocrates anzeigen
    .aria-label = Zocrates anzeigen
